import type { LookupAddress } from "node:dns";
import { isIP, type LookupFunction, type Socket } from "node:net";
import { Pool, type buildConnector, type Dispatcher } from "undici";
import { ProxyError } from "./proxy-error.js";

/** PARLEY_WEBHOOK_PROXY_URL, parsed: where the proxy is and how to authenticate to it. */
export interface EgressProxy {
  /** `host:port`, for messages (never the credentials). */
  readonly name: string;
  /** Opens a tunnel to `address:port` (an address already checked); answers the raw socket. */
  tunnel(address: string, port: number): Promise<Socket>;
  close(): Promise<void>;
}

/**
 * Parses the proxy URL (`http://host:port`, optionally `http://user:password@host:port`).
 * Throws a plain-worded Error for anything else.
 */
export function parseProxyUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error("PARLEY_WEBHOOK_PROXY_URL must be an absolute URL such as http://proxy:3128");
  }
  if (url.protocol !== "http:")
    throw new Error(
      `PARLEY_WEBHOOK_PROXY_URL must be an http:// URL (the proxy is asked to CONNECT; got ${url.protocol.slice(0, -1)}://)`,
    );
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "")
    throw new Error("PARLEY_WEBHOOK_PROXY_URL must be only http://[user:password@]host:port");
  return url;
}

/**
 * An HTTP proxy reached by CONNECT (RFC 9110 section 9.3.6). The tunnel is asked for an IP
 * address, never a host name: the caller resolved and checked the name (the SSRF rules), so the
 * proxy cannot resolve it again to another address. The proxy's own connections are pooled by
 * undici; each CONNECT takes one and hands its socket over.
 */
export function createEgressProxy(url: URL): EgressProxy {
  const authorization =
    url.username === ""
      ? undefined
      : `Basic ${Buffer.from(
          `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
        ).toString("base64")}`;
  const pool = new Pool(url.origin, { pipelining: 0 });
  const name = url.host;
  return {
    name,
    async tunnel(address, port) {
      const authority = `${isIP(address) === 6 ? `[${address}]` : address}:${port}`;
      let answer: Dispatcher.ConnectData;
      try {
        answer = await pool.connect({
          path: authority,
          headers: {
            host: authority,
            ...(authorization === undefined ? {} : { "proxy-authorization": authorization }),
          },
        });
      } catch (error) {
        const code = (error as { code?: string }).code;
        throw new ProxyError(
          `egress proxy ${name} could not be reached${code === undefined ? "" : ` (${code})`}`,
          { cause: error },
        );
      }
      const { statusCode, socket } = answer;
      if (statusCode !== 200) {
        socket.destroy();
        throw new ProxyError(
          statusCode === 407
            ? `egress proxy ${name} answered CONNECT ${authority} with HTTP 407 (proxy authentication required: check the credentials in PARLEY_WEBHOOK_PROXY_URL)`
            : `egress proxy ${name} answered CONNECT ${authority} with HTTP ${statusCode}`,
        );
      }
      return socket as Socket;
    },
    close: () => pool.close(),
  };
}

/**
 * A connector that reaches every receiver through the proxy: resolves and checks the host with
 * the guarded lookup, asks the proxy for a tunnel to the first checked address, and for https
 * runs TLS over the tunnel (`tls`, undici's connector with `httpSocket`) with the host name for
 * SNI and the certificate check.
 */
export function connectThroughProxy(
  proxy: EgressProxy,
  lookup: LookupFunction,
  tls: buildConnector.connector,
): buildConnector.connector {
  return (options, callback) => {
    const port = Number(options.port) || (options.protocol === "https:" ? 443 : 80);
    const host = options.hostname.replace(/^\[|\]$/g, "");
    lookup(host, { all: true }, (error, result) => {
      if (error) {
        callback(error, null);
        return;
      }
      const [first] = (typeof result === "string" ? [{ address: result }] : result) as
        LookupAddress[] | [{ address: string }];
      if (first === undefined) {
        callback(new Error(`no address for ${host}`), null);
        return;
      }
      proxy.tunnel(first.address, port).then(
        (socket) => {
          if (options.protocol !== "https:") {
            callback(null, socket);
            return;
          }
          tls(
            {
              ...options,
              httpSocket: socket,
              // SNI and the certificate check use the receiver's name, not the tunnel's address.
              ...(isIP(host) === 0 ? { servername: host } : {}),
            },
            callback,
          );
        },
        (tunnelError: unknown) => callback(tunnelError as Error, null),
      );
    });
  };
}
