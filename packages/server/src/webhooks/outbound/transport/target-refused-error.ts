/**
 * A receiver address the SSRF guard will not connect to (loopback, private, link-local, metadata...).
 * The message says why and names the address, never the secret or the signature.
 */
export class TargetRefusedError extends Error {
  readonly code = "target_refused";
  /** Why the target was refused, without the "target refused: " prefix. */
  readonly reason: string;

  constructor(reason: string, options?: ErrorOptions) {
    super(`target refused: ${reason}`, options);
    this.name = "TargetRefusedError";
    this.reason = reason;
  }
}
