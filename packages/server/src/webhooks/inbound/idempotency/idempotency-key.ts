import { AppError } from "../../../errors/app-error.js";

/** 1..255 printable ASCII characters (space included), as DESIGN section 6 says. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` request header: undefined when absent; else the key, or 400
 * invalid_idempotency_key when it is not 1..255 printable ASCII characters (or sent twice).
 */
export function readIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== "string" || !KEY_PATTERN.test(header)) {
    throw new AppError(
      "invalid_idempotency_key",
      "Idempotency-Key must be one header of 1 to 255 printable ASCII characters",
      { field: "headers.idempotency-key" },
    );
  }
  return header;
}
