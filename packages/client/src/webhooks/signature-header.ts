/** The header every delivery is signed in: `sha256=<lowercase hex HMAC-SHA256 of the raw body>`. */
export const SIGNATURE_HEADER = "x-webhook-signature-256";
