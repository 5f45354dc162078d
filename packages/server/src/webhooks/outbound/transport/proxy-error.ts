/**
 * The egress proxy could not open a tunnel to the receiver: it was unreachable, refused the
 * CONNECT, or asked for credentials. The message names the proxy by host and port only, never
 * its credentials.
 */
export class ProxyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ProxyError";
  }
}
