import type { EndpointAuth, EndpointAuthParams } from "@parley/client/wire";
import { AppError } from "../../errors/app-error.js";
import { maskHeaderValue } from "./mask-header-value.js";
import { checkWebhookUrl, type UrlPolicy } from "./transport/ssrf-guard.js";

/**
 * An endpoint's `auth` as stored (sealed whole in `webhooks.auth_ciphertext`) and as the sender
 * uses it: every field present, credentials in the clear.
 */
export type StoredAuth =
  | { type: "basic"; username: string; password: string }
  | { type: "bearer"; token: string }
  | {
      type: "oauth2";
      tokenUrl: string;
      clientId: string;
      clientSecret: string;
      scope: string | null;
      audience: string | null;
    };

export const AUTH_VALUE_MAX_CHARS = 4096;
export const AUTH_URL_MAX_CHARS = 2048;
/** Visible ASCII and space: no control characters, so nothing can split a header or a form. */
const PRINTABLE = /^[\x20-\x7e]*$/;

function invalid(message: string, field: string): AppError {
  return new AppError("invalid_auth", message, { field: `body.auth.${field}` });
}

/** A required printable field of 1..4096 characters; the message never echoes the value. */
function required(value: string | null | undefined, field: string, what: string): string {
  if (value === undefined || value === null || value === "")
    throw invalid(`auth.${field} is required for ${what}`, field);
  if (value.length > AUTH_VALUE_MAX_CHARS || !PRINTABLE.test(value))
    throw invalid(
      `auth.${field} must be printable ASCII of at most ${AUTH_VALUE_MAX_CHARS} characters`,
      field,
    );
  return value;
}

function optional(value: string | null | undefined, field: string): string | null {
  if (value === undefined || value === null || value === "") return null;
  return required(value, field, "");
}

const FIELDS: Record<StoredAuth["type"], readonly string[]> = {
  basic: ["type", "username", "password"],
  bearer: ["type", "token"],
  oauth2: ["type", "tokenUrl", "clientId", "clientSecret", "scope", "audience"],
};

/**
 * Checks an `auth` given on create or PATCH and answers what to store (null: no auth). On PATCH,
 * `stored` is the endpoint's current auth: an omitted password, token or clientSecret of the same
 * type keeps the stored one, so an admin can change a scope without typing the secret again.
 * `tokenUrl` is checked by the receiver URL's rules (scheme, no credentials, no internal
 * addresses), and again at every token request, as `url` is at every attempt.
 */
export function validateAuth(
  input: EndpointAuthParams | null,
  stored: StoredAuth | null,
  policy: UrlPolicy,
): StoredAuth | null {
  if (input === null) return null;
  const kept = stored !== null && stored.type === input.type ? stored : null;
  for (const field of Object.keys(input)) {
    if (!FIELDS[input.type].includes(field))
      throw invalid(`auth.${field} does not apply to auth of type ${input.type}`, field);
  }
  switch (input.type) {
    case "basic": {
      const username = required(input.username, "username", "basic auth");
      // RFC 7617: the user-id cannot hold a colon, the separator of user-pass.
      if (username.includes(":"))
        throw invalid("auth.username must not contain a colon (RFC 7617)", "username");
      const password = required(
        input.password ?? (kept?.type === "basic" ? kept.password : undefined),
        "password",
        "basic auth",
      );
      return { type: "basic", username, password };
    }
    case "bearer": {
      const token = required(
        input.token ?? (kept?.type === "bearer" ? kept.token : undefined),
        "token",
        "bearer auth",
      );
      return { type: "bearer", token };
    }
    case "oauth2": {
      const rawUrl = required(input.tokenUrl, "tokenUrl", "oauth2").trim();
      if (rawUrl.length > AUTH_URL_MAX_CHARS)
        throw invalid(`auth.tokenUrl must be at most ${AUTH_URL_MAX_CHARS} characters`, "tokenUrl");
      const check = checkWebhookUrl(rawUrl, policy);
      if (!check.ok)
        throw new AppError(check.code, check.message.replace(/^url/, "auth.tokenUrl"), {
          field: "body.auth.tokenUrl",
        });
      if (check.url.hash !== "")
        throw invalid("auth.tokenUrl must not have a fragment", "tokenUrl");
      return {
        type: "oauth2",
        tokenUrl: rawUrl,
        clientId: required(input.clientId, "clientId", "oauth2"),
        clientSecret: required(
          input.clientSecret ?? (kept?.type === "oauth2" ? kept.clientSecret : undefined),
          "clientSecret",
          "oauth2",
        ),
        scope: optional(input.scope, "scope"),
        audience: optional(input.audience, "audience"),
      };
    }
  }
}

/** `auth` as the API shows it: the write-only parts masked like custom header values. */
export function authView(auth: StoredAuth | null): EndpointAuth | null {
  if (auth === null) return null;
  switch (auth.type) {
    case "basic":
      return { type: "basic", username: auth.username, password: maskHeaderValue(auth.password) };
    case "bearer":
      return { type: "bearer", token: maskHeaderValue(auth.token) };
    case "oauth2":
      return { ...auth, clientSecret: maskHeaderValue(auth.clientSecret) };
  }
}

/** The `Authorization` header as the attempt log keeps it: its scheme, the credential masked. */
export function loggedAuthorization(auth: StoredAuth): string {
  return auth.type === "basic" ? "Basic ****" : "Bearer ****";
}
