import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

type Next = (error?: unknown) => void;
export type Middleware = (req: http.IncomingMessage, res: http.ServerResponse, next: Next) => void;
export type ErrorMiddleware = (
  error: unknown,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  next: Next,
) => void;

/**
 * A Connect/Express-shaped app in a few lines: middlewares run in order, each calling `next()`;
 * `next(error)` skips to the error handler (Express's four-argument middleware); an unanswered
 * request gets 404. Enough to run Express middleware without Express.
 */
export async function startConnectApp(
  stack: Middleware[],
  onError: ErrorMiddleware = (error, _req, res) => {
    res.writeHead(500, { "content-type": "text/plain" }).end(String((error as Error).message));
  },
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let index = 0;
    const next: Next = (error) => {
      if (error !== undefined) return onError(error, req, res, () => undefined);
      const middleware = stack[index++];
      if (middleware === undefined) return void res.writeHead(404).end();
      try {
        middleware(req, res, next);
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Like express.json(): consumes the body and sets `req.body` to the parsed value. */
export const jsonParser =
  (options: { keepRaw?: boolean } = {}): Middleware =>
  (req, _res, next) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const target = req as http.IncomingMessage & { body?: unknown; rawBody?: Buffer };
      if (options.keepRaw) target.rawBody = raw;
      target.body = raw.length === 0 ? {} : JSON.parse(raw.toString("utf8"));
      next();
    });
  };

/** Like express.raw(): consumes the body and sets `req.body` to the Buffer. */
export const rawParser = (): Middleware => (req, _res, next) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    (req as http.IncomingMessage & { body?: unknown }).body = Buffer.concat(chunks);
    next();
  });
};
