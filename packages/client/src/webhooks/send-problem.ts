import type { ServerResponse } from "node:http";
import type { ProblemDetails } from "../types/api.js";

/** Answers with an RFC 9457 body, the way Parley answers its own errors. */
export function sendProblem(
  res: ServerResponse,
  problem: ProblemDetails,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(problem);
  res.writeHead(problem.status, {
    ...headers,
    "content-type": "application/problem+json",
    "content-length": String(Buffer.byteLength(body)),
  });
  res.end(body);
}

export function problem(
  status: number,
  code: string,
  title: string,
  detail: string,
): ProblemDetails {
  return { type: `https://parley.dev/errors/${code}`, title, status, detail, code };
}
