import { request, type RequestInterface } from "@parley/client";
import { CliError } from "./cli-error.js";

export const DEFAULT_PARLEY_URL = "http://localhost:8080";

/**
 * `request` bound to the server named by `PARLEY_URL` (default http://localhost:8080) and the
 * admin token in `PARLEY_TOKEN`, which every API command needs.
 */
export function apiFromEnv(env: NodeJS.ProcessEnv): { api: RequestInterface; baseUrl: string } {
  const baseUrl = (env.PARLEY_URL || DEFAULT_PARLEY_URL).replace(/\/+$/, "");
  const token = env.PARLEY_TOKEN;
  if (!token) {
    throw new CliError(
      "PARLEY_TOKEN is not set: export an admin token (`parley token create --role admin --subject admin` makes one)",
    );
  }
  try {
    new URL(baseUrl);
  } catch {
    throw new CliError(`PARLEY_URL is not a URL: "${baseUrl}"`);
  }
  return {
    api: request.defaults({ baseUrl, headers: { authorization: `Bearer ${token}` } }),
    baseUrl,
  };
}
