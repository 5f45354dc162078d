/**
 * What the attempt log keeps of a request's and a response's headers (docs/security.md, "The
 * delivery log and admin API"). A signature with the body it signs is a delivery anyone could
 * replay, and a receiver's answer can carry its own credentials (a session cookie, an API key);
 * the log is read by every admin, in the API and the admin UI, for 30 days. Applied where attempts
 * are recorded, and again where they are shown (for attempts recorded before). Both are
 * idempotent: a masked set of headers masks to itself.
 */

/** The headers that carry a signature of the body: Parley's and Standard Webhooks'. */
const SIGNATURE_HEADERS = new Set(["x-webhook-signature-256", "webhook-signature"]);

/**
 * A response header whose value may be a credential: `set-cookie`, `authorization`,
 * `www-authenticate`, `proxy-authenticate`, `x-api-key`, `x-auth-token`, `x-csrf-token`, ...
 */
const CREDENTIAL_NAME = /auth|cookie|key|token|secret|session|passw|credential|signature/;

const MASK = "****";

/**
 * A signature header with only its schemes: `sha256=****` for `X-Webhook-Signature-256`,
 * `v1,**** v1,****` for a `webhook-signature` with two signatures (a rotation overlap).
 */
function maskSignatures(value: string): string {
  return value
    .split(" ")
    .map((signature) => {
      const scheme = /^[A-Za-z0-9_-]{1,16}[=,]/.exec(signature)?.[0];
      return scheme === undefined ? MASK : `${scheme}${MASK}`;
    })
    .join(" ");
}

/**
 * The request's headers as the log keeps them: signatures and Authorization reduced to their
 * schemes. Custom
 * headers arrive already masked (maskHeaderValue, by the dispatcher), the rest are Parley's own.
 */
export function maskLoggedRequestHeaders(headers: Record<string, string>): Record<string, string> {
  const logged: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    logged[name] = SIGNATURE_HEADERS.has(lower)
      ? maskSignatures(value)
      : lower === "authorization"
        ? maskAuthorization(value)
        : value;
  }
  return logged;
}

/**
 * `Authorization` with its scheme only: `Bearer ****`, `Basic ****`. A value already masked (the
 * endpoint's auth, or a custom header masked as custom values are) stays as it is.
 */
function maskAuthorization(value: string): string {
  if (value.includes(MASK)) return value;
  const scheme = /^[A-Za-z][A-Za-z0-9_-]{0,15} /.exec(value)?.[0];
  return scheme === undefined ? MASK : `${scheme}${MASK}`;
}

/** The response's headers as the log keeps them: a credential-like one's value masked whole. */
export function maskLoggedResponseHeaders(headers: Record<string, string>): Record<string, string> {
  const logged: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    logged[name] = CREDENTIAL_NAME.test(name.toLowerCase()) ? MASK : value;
  return logged;
}
