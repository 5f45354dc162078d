import { expect, it, onTestFinished } from "vitest";
import { describeEachDialect } from "../../helpers/dialects.js";
import { listeningApp } from "../../helpers/listening-app.js";
import { openStream } from "../../helpers/stream-socket.js";
import { signIn, userWithPassword } from "./sign-in-helpers.js";

/**
 * The live stream with a session: a page of Parley's own origin sends an empty token and the
 * upgrade's cookie signs it in; another origin's page (cross-site WebSocket hijacking) cannot.
 */
describeEachDialect("the live stream signed in by session on $name", (dialect) => {
  const server = listeningApp(dialect, { streamReauthenticateMs: 200 });

  async function streamWith(headers: Record<string, string>) {
    const socket = await openStream(server.origin, { headers });
    onTestFinished(() => socket.close());
    socket.send({ type: "auth", token: "" });
    return socket;
  }

  it("authenticates an empty token by the session cookie of a same-origin upgrade", async () => {
    const user = await userWithPassword(server.t);
    const browser = await signIn(server.t, user.username);
    const socket = await streamWith({ cookie: browser.cookie, origin: server.origin });
    const ready = await socket.next((frame) => frame.type === "ready");
    expect(ready).toMatchObject({ userId: user.id, username: user.username });
  });

  it("refuses the cookie of an upgrade from another origin, or without one", async () => {
    const user = await userWithPassword(server.t);
    const browser = await signIn(server.t, user.username);
    const cases: Record<string, string>[] = [
      { cookie: browser.cookie, origin: "https://evil.example" },
      { cookie: browser.cookie },
    ];
    for (const headers of cases) {
      const socket = await streamWith(headers);
      expect((await socket.closed).code).toBe(4401);
    }
  });

  it("closes the stream when the session ends", async () => {
    const user = await userWithPassword(server.t);
    const browser = await signIn(server.t, user.username);
    const socket = await streamWith({ cookie: browser.cookie, origin: server.origin });
    await socket.next((frame) => frame.type === "ready");
    const out = await server.t.app.inject({
      method: "POST",
      url: "/api/auth/logout",
      headers: { cookie: browser.cookie, "x-parley-csrf": browser.csrf },
    });
    expect(out.statusCode).toBe(204);
    expect((await socket.closed).code).toBe(4401);
  });
});
