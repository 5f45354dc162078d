import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createProxy } from "proxy";

export interface ConnectProxy {
  /** `http://127.0.0.1:PORT`, or with `user:password@` when the proxy asks for credentials. */
  url: string;
  port: number;
  /** Every CONNECT target asked for (`address:port`), in order, accepted or not. */
  connects: string[];
  close(): Promise<void>;
}

/**
 * A real HTTP proxy on loopback (the `proxy` package) that tunnels CONNECT requests, as an
 * egress proxy does; with `credentials`, it answers 407 to a CONNECT without them.
 */
export async function startConnectProxy(credentials?: {
  username: string;
  password: string;
}): Promise<ConnectProxy> {
  const server = createProxy(http.createServer());
  const connects: string[] = [];
  server.prependListener("connect", (req: http.IncomingMessage) => connects.push(req.url ?? ""));
  if (credentials !== undefined) {
    const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
    server.authenticate = (req) => req.headers["proxy-authorization"] === expected;
  }
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const auth =
    credentials === undefined
      ? ""
      : `${encodeURIComponent(credentials.username)}:${encodeURIComponent(credentials.password)}@`;
  return {
    url: `http://${auth}127.0.0.1:${port}`,
    port,
    connects,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
