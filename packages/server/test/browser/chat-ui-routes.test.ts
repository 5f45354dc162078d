import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatUiRoutes } from "../../src/chat-ui/chat-ui-routes.js";

describe("the chat page's routes", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-chat-ui-"));
  const app = Fastify({ logger: false });

  beforeAll(async () => {
    fs.mkdirSync(path.join(dir, "assets"));
    fs.writeFileSync(path.join(dir, "index.html"), "<!doctype html><title>Parley</title>");
    fs.writeFileSync(path.join(dir, "assets", "chat-abc.js"), "console.log(1)");
    await app.register(chatUiRoutes, { dir });
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("serves the page at /app/ and its deep links, with the security headers", async () => {
    for (const url of ["/app/", "/app/rooms/3"]) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(res.headers["content-security-policy"]).toContain("connect-src 'self'");
      expect(res.body).toContain("<title>Parley</title>");
    }
    expect((await app.inject({ url: "/app" })).headers.location).toBe("/app/");
  });

  it("serves hashed assets for ever, and a missing one as 404, never as the page", async () => {
    const asset = await app.inject({ url: "/app/assets/chat-abc.js" });
    expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(asset.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect((await app.inject({ url: "/app/assets/nope.js" })).statusCode).toBe(404);
  });
});
