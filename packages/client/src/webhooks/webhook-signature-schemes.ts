import { ParleyError } from "../errors/parley-error.js";

/**
 * The signature schemes of a Parley endpoint, as a receiver names the ones it accepts:
 * `"standard-webhooks"` (`webhook-id`, `webhook-timestamp`, `webhook-signature`: signed with a
 * timestamp, so a replay is refused after the tolerance) and `"parley"`
 * (`X-Webhook-Signature-256`: no timestamp, so a captured delivery verifies for ever).
 */
export type WebhookSignatureScheme = "standard-webhooks" | "parley";

/**
 * What a verifier accepts when not told: either scheme, so that a receiver works with an endpoint
 * of any scheme (`parley` is the endpoints' default). A receiver of a `standard-webhooks` or
 * `both` endpoint should pass `["standard-webhooks"]`: accepting `parley` too accepts a captured
 * `both` delivery replayed without its `webhook-*` headers.
 */
export const DEFAULT_SIGNATURE_SCHEMES: readonly WebhookSignatureScheme[] = Object.freeze([
  "standard-webhooks",
  "parley",
]);

/** `schemes` as given (default DEFAULT_SIGNATURE_SCHEMES); throws on an empty or unknown one. */
export function acceptedSchemes(
  schemes: readonly WebhookSignatureScheme[] | undefined,
): readonly WebhookSignatureScheme[] {
  if (schemes === undefined) return DEFAULT_SIGNATURE_SCHEMES;
  if (!Array.isArray(schemes) || schemes.length === 0)
    throw new ParleyError('schemes must list at least one of "standard-webhooks" and "parley"');
  for (const scheme of schemes as readonly unknown[]) {
    if (scheme !== "standard-webhooks" && scheme !== "parley")
      throw new ParleyError(
        `schemes may hold only "standard-webhooks" and "parley", not ${JSON.stringify(scheme)}`,
      );
  }
  return schemes;
}
