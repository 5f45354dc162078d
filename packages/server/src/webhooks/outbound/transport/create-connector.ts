import type { LookupFunction, Socket } from "node:net";
import { rootCertificates } from "node:tls";
import { buildConnector, errors } from "undici";
import { connectThroughProxy, type EgressProxy } from "./egress-proxy.js";

export interface ConnectorOptions {
  /** Budget for DNS + TCP + TLS. */
  connectTimeoutMs: number;
  /** Resolves (and checks) host names for each new connection. */
  lookup: LookupFunction;
  /** Extra trusted CA certificates (PEM), added to Node's default roots. */
  ca?: string | Buffer;
  /** A client certificate for mutual TLS, and the CA its endpoint trusts besides the others. */
  clientTls?: ClientTls | undefined;
  /** PARLEY_WEBHOOK_PROXY_URL: every connection is a CONNECT tunnel through it. */
  proxy?: EgressProxy | undefined;
}

/** One endpoint's TLS identity (its `tls` setting). */
export interface ClientTls {
  clientCertificatePem: string;
  clientKeyPem: string;
  passphrase: string | null;
  caPem: string | null;
}

/**
 * How the sender's connection pool opens sockets: undici's connector with the guarded lookup, the
 * extra CA, and a connect time-out on a plain timer. undici's own connect timer ticks every half
 * second, so a 5 s budget could run to 6 s; this one fires on time and covers the DNS lookup too.
 */
export function createConnector(options: ConnectorOptions): buildConnector.connector {
  const extraCas = [options.ca?.toString(), options.clientTls?.caPem ?? undefined].filter(
    (pem): pem is string => pem !== undefined,
  );
  const client = options.clientTls;
  const direct = buildConnector({
    lookup: options.lookup,
    // Passing `ca` replaces Node's roots, so keep them and add the operator's and the endpoint's.
    ...(extraCas.length === 0 ? {} : { ca: [...rootCertificates, ...extraCas] }),
    ...(client === undefined
      ? {}
      : {
          cert: client.clientCertificatePem,
          key: client.clientKeyPem,
          ...(client.passphrase === null ? {} : { passphrase: client.passphrase }),
        }),
    timeout: 0, // disabled: the timer below replaces it
  });
  const base =
    options.proxy === undefined
      ? direct
      : connectThroughProxy(options.proxy, options.lookup, direct);
  const { connectTimeoutMs } = options;

  return (connectOptions, callback) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      socket?.destroy();
      callback(
        new errors.ConnectTimeoutError(`connect timed out after ${connectTimeoutMs} ms`),
        null,
      );
    }, connectTimeoutMs);
    // undici's connector returns the socket it opened, although its type says void.
    const socket = (base as (...args: Parameters<typeof base>) => Socket | undefined)(
      connectOptions,
      (...args) => {
        clearTimeout(timer);
        if (settled) {
          args[1]?.destroy();
          return;
        }
        settled = true;
        callback(...args);
      },
    );
  };
}
