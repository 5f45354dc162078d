import { ParleyError } from "./parley-error.js";

/**
 * A secret given to a webhook verifier that cannot be a key: none at all, one under 16 bytes, or
 * a `whsec_` secret whose rest is not base64. Thrown when the verifier or receiver is set up (or
 * called), never for a request: it is a set-up error, and verifying with such a key would let
 * anyone forge deliveries. The message never contains the secret.
 */
export class WebhookSecretError extends ParleyError {
  override name = "WebhookSecretError";
}
