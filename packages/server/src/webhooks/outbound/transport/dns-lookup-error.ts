/** Resolving a receiver's host name failed; `code` keeps the resolver's code (ENOTFOUND, EAI_AGAIN). */
export class DnsLookupError extends Error {
  readonly code: string;
  readonly hostname: string;

  constructor(hostname: string, code: string, options?: ErrorOptions) {
    super(`DNS lookup failed for ${hostname}: ${code}`, options);
    this.name = "DnsLookupError";
    this.hostname = hostname;
    this.code = code;
  }
}
