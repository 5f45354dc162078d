import type { ProblemDetails } from "../types/api.js";

/** True for an RFC 9457 body as Parley sends it: an object with a numeric status and a code. */
export function isProblemDetails(value: unknown): value is ProblemDetails {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const problem = value as Record<string, unknown>;
  return typeof problem.code === "string" && typeof problem.status === "number";
}
