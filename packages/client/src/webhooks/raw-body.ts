/** The exact bytes of a webhook body, as received. Strings are taken as UTF-8. */
export type RawBody = string | Uint8Array | ArrayBuffer;

export function toBytes(rawBody: RawBody): Uint8Array {
  if (typeof rawBody === "string") return Buffer.from(rawBody, "utf8");
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  return rawBody;
}
