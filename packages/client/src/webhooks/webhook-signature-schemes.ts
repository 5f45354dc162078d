import { ParleyError } from "../errors/parley-error.js";
import { WebhookSecretError } from "../errors/webhook-secret-error.js";

/**
 * The signature schemes of a Parley endpoint, as a receiver names the ones it accepts:
 * `"standard-webhooks"` (`webhook-id`, `webhook-timestamp`, `webhook-signature` with `v1,` HMAC
 * entries: signed with a timestamp, so a replay is refused after the tolerance),
 * `"standard-webhooks-ed25519"` (the same headers with `v1a,` ed25519 entries, verified with the
 * endpoint's public key: the receiver holds nothing that could sign) and `"parley"`
 * (`X-Webhook-Signature-256`: no timestamp, so a captured delivery verifies for ever).
 */
export type WebhookSignatureScheme = "standard-webhooks" | "standard-webhooks-ed25519" | "parley";

const ALL: readonly WebhookSignatureScheme[] = [
  "standard-webhooks",
  "standard-webhooks-ed25519",
  "parley",
];

/**
 * What a verifier accepts when not told, given a secret: either HMAC scheme, so that a receiver
 * works with an endpoint of any of them (`parley` is the endpoints' default). A receiver of a
 * `standard-webhooks` or `both` endpoint should pass `["standard-webhooks"]`: accepting `parley`
 * too accepts a captured `both` delivery replayed without its `webhook-*` headers. Given a public
 * key, `standard-webhooks-ed25519` is accepted too (alone, without a secret).
 */
export const DEFAULT_SIGNATURE_SCHEMES: readonly WebhookSignatureScheme[] = Object.freeze([
  "standard-webhooks",
  "parley",
]);

/** What a receiver verifies with: the endpoint's secret, its public key, or both. */
export interface WebhookKeys {
  secret?: string | readonly string[] | undefined;
  publicKey?: string | readonly string[] | undefined;
}

/**
 * `schemes` as given, or the default for the keys given (DEFAULT_SIGNATURE_SCHEMES with a secret,
 * plus `standard-webhooks-ed25519` with a public key); throws on an empty or unknown one, and
 * (WebhookSecretError) when neither a secret nor a public key is given.
 */
export function acceptedSchemes(
  schemes: readonly WebhookSignatureScheme[] | undefined,
  keys: WebhookKeys,
): readonly WebhookSignatureScheme[] {
  if (schemes === undefined) {
    if (keys.publicKey === undefined) return DEFAULT_SIGNATURE_SCHEMES;
    return keys.secret === undefined
      ? ["standard-webhooks-ed25519"]
      : [...DEFAULT_SIGNATURE_SCHEMES, "standard-webhooks-ed25519"];
  }
  if (!Array.isArray(schemes) || schemes.length === 0)
    throw new ParleyError(
      'schemes must list at least one of "standard-webhooks", "standard-webhooks-ed25519" and "parley"',
    );
  for (const scheme of schemes as readonly unknown[]) {
    if (!ALL.includes(scheme as WebhookSignatureScheme))
      throw new ParleyError(
        `schemes may hold only "standard-webhooks", "standard-webhooks-ed25519" and "parley", not ${JSON.stringify(scheme)}`,
      );
  }
  if (keys.secret === undefined && keys.publicKey === undefined)
    throw new WebhookSecretError(
      "no webhook secret or public key was given: pass the endpoint's secret, or its publicKey for standard-webhooks-ed25519",
    );
  return schemes;
}
