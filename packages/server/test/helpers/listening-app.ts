/**
 * A test app listening on a loopback port, for the tests of one describe block that need a real
 * socket (the live stream): started before them, closed after them. The stream sockets a test
 * opens with `open` are closed after it, read again first so that a paused one answers the close
 * handshake.
 *
 *   const server = listeningApp(dialect);
 *   const socket = await server.open(alice);   // authenticated: after its `ready` frame
 *   await server.t.app.inject({ url: "/metrics" });
 */
import { afterAll, afterEach, beforeAll } from "vitest";
import type { ConfigOverrides } from "../../src/config/load-config.js";
import { createTestApp, type TestApp, type TestUser } from "./build-app.js";
import type { TestDialect } from "./dialects.js";
import { openAuthenticated, type StreamSocket } from "./stream-socket.js";

export interface ListeningApp {
  /** The app, there once the block's beforeAll hooks have run. */
  readonly t: TestApp;
  /** Where it listens: `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Opens a stream socket authenticated as `user`; it is closed after the test. */
  open(user: TestUser): Promise<StreamSocket>;
}

export function listeningApp(dialect: TestDialect, overrides: ConfigOverrides = {}): ListeningApp {
  let app: TestApp | undefined;
  let origin = "";
  const sockets: StreamSocket[] = [];

  beforeAll(async () => {
    app = await createTestApp(dialect, overrides);
    origin = await app.app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    for (const socket of sockets) socket.ws.resume();
    await Promise.all(sockets.splice(0).map((socket) => socket.close()));
  });
  afterAll(async () => {
    await app?.close();
  });

  return {
    get t() {
      if (!app) throw new Error("the listening app starts in beforeAll");
      return app;
    },
    get origin() {
      return origin;
    },
    async open(user) {
      const socket = await openAuthenticated(origin, user.token);
      sockets.push(socket);
      return socket;
    },
  };
}
