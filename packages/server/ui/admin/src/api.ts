/**
 * The admin's session and API access, through @parley/client/browser: the client without its
 * Node-only webhook helpers, so the bundle pulls in no Node built-in.
 */
import { NetworkError, RequestError, request } from "@parley/client/browser";

export { paginate } from "@parley/client/browser";
export { RequestError };

const TOKEN_KEY = "parley.admin.token";

/**
 * How this tab is signed in: a pasted bearer token, or a session (its cookie is HttpOnly, sent by
 * the browser; unsafe requests carry the session's CSRF value in X-Parley-CSRF).
 */
export type Credentials = { kind: "token"; token: string } | { kind: "session"; csrf: string };

/** The token pasted at sign-in: sessionStorage, so it ends with the tab and is never a cookie. */
export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** A pasted token without whitespace and without a `Bearer ` prefix copied along with it. */
export function normalizeToken(pasted: string): string {
  return pasted.trim().replace(/^bearer\s+/i, "");
}

/** Calls that need no credentials: signing in. */
export const anonymousApi = () => request.defaults({ baseUrl: location.origin });

/**
 * The session this browser holds, if any (after a password or single sign-on, or a reload): its
 * CSRF value, or null when there is none.
 */
export async function currentSession(): Promise<Credentials | null> {
  try {
    const { data } = await anonymousApi()("GET /api/auth/csrf");
    return { kind: "session", csrf: data.csrfToken };
  } catch (error) {
    if (error instanceof RequestError && (error.status === 401 || error.status === 404))
      return null;
    throw error;
  }
}

/** `request` bound to this server with the tab's credentials. */
export function createApi(credentials: Credentials | string) {
  const chosen: Credentials =
    typeof credentials === "string" ? { kind: "token", token: credentials } : credentials;
  return request.defaults({
    baseUrl: location.origin,
    headers:
      chosen.kind === "token"
        ? { authorization: `Bearer ${chosen.token}` }
        : { "x-parley-csrf": chosen.csrf },
  });
}

export type Api = ReturnType<typeof createApi>;

/** A sentence for the operator: the problem's detail, or what went wrong on the way. */
export function describeError(error: unknown): string {
  if (error instanceof RequestError) {
    const problem = error.problem;
    if (problem !== undefined) return problem.detail || problem.title || problem.code;
    return `The server answered ${error.status}.`;
  }
  if (error instanceof NetworkError) return `The server could not be reached (${error.message}).`;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function isStatus(error: unknown, status: number, code?: string): error is RequestError {
  return (
    error instanceof RequestError &&
    error.status === status &&
    (code === undefined || error.code === code)
  );
}
