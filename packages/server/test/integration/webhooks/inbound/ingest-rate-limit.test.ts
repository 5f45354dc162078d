import crypto from "node:crypto";
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import type { FastifyBaseLogger } from "fastify";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect, SQLITE } from "../../../helpers/dialects.js";
import { TEST_REDIS_URL } from "../../../helpers/services.js";
import { waitFor } from "../../../helpers/wait-for.js";
import { createIngestRateLimiter } from "../../../../src/webhooks/inbound/ingest-rate-limit.js";
import { hashIngestToken } from "../../../../src/webhooks/inbound/ingest-token.js";
import { createRoom } from "../../../helpers/fixtures.js";
import { createWebhook, ingest, ingestSlack, messagesOf, unknownToken } from "./inbound-helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeEachDialect("webhook_ingest rate limit on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "2/1s" });
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers 429 rate_limited with Retry-After and RateLimit-* headers past the limit, then resets with the window", async () => {
    const hook = await createWebhook(t);
    const first = await ingest(t, hook.token, { content: "1" });
    const second = await ingest(t, hook.token, { content: "2" });
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    expect(first.headers).toMatchObject({ "ratelimit-limit": "2", "ratelimit-remaining": "1" });
    expect(second.headers).toMatchObject({ "ratelimit-limit": "2", "ratelimit-remaining": "0" });

    const limited = await ingest(t, hook.token, { content: "3" });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(limited.json()).toMatchObject({ status: 429, code: "rate_limited" });
    expect(limited.headers).toMatchObject({ "ratelimit-limit": "2", "ratelimit-remaining": "0" });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers["ratelimit-reset"])).toBeGreaterThanOrEqual(1);
    expect((await messagesOf(t, hook.roomId)).map((m) => m.content)).toEqual(["1", "2"]);

    // The window is the policy's own second ("2/1s"): the next post falls in a new one.
    await sleep(1100);
    const again = await ingest(t, hook.token, { content: "4" });
    expect(again.statusCode).toBe(200);
    expect(again.headers["ratelimit-remaining"]).toBe("1");
  });

  it("counts before the token lookup and before the body is read: unknown tokens and bad bodies are limited too", async () => {
    const token = unknownToken();
    const answers = [
      (await ingest(t, token, { content: "x" })).statusCode,
      (await ingest(t, token, "{broken")).statusCode,
      (await ingest(t, token, { content: "x" })).statusCode,
    ];
    expect(answers).toEqual([404, 400, 429]);
  });

  it("shares one bucket per token between the native and the Slack form, and keeps tokens apart", async () => {
    const hook = await createWebhook(t);
    const other = await createWebhook(t);
    expect((await ingest(t, hook.token, { content: "native" })).statusCode).toBe(200);
    expect((await ingestSlack(t, hook.token, { text: "slack" })).statusCode).toBe(200);
    const limited = await ingestSlack(t, hook.token, { text: "slack again" });
    expect([limited.statusCode, limited.body]).toEqual([429, "rate_limited"]);
    expect(limited.headers["retry-after"]).toBeDefined();
    expect((await ingest(t, hook.token, { content: "native again" })).statusCode).toBe(429);
    expect((await ingest(t, other.token, { content: "other token" })).statusCode).toBe(200);
  });
});

describe("webhook_ingest rate limit shared through Redis", { tags: ["redis"] }, () => {
  const prefix = `parley-test-${crypto.randomBytes(6).toString("hex")}:`;
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    const settings = {
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: prefix,
      rateLimitWebhookIngest: "3/10s",
    };
    a = await createTestApp(SQLITE, settings);
    b = await createTestApp(SQLITE, settings);
    redis = new Redis(TEST_REDIS_URL!);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await a?.close();
    await b?.close();
  });

  it("counts one token's posts across two app instances, keyed by the token's hash", async () => {
    const hook = await createWebhook(a);
    // The same webhook in the second instance's database, as two processes sharing one database see it.
    const roomId = (await createRoom(b)).id;
    const row = await a.ctx.db
      .selectFrom("inbound_webhooks")
      .selectAll()
      .where("id", "=", hook.id)
      .executeTakeFirstOrThrow();
    const { id: _id, ...copy } = row;
    await b.ctx.db
      .insertInto("inbound_webhooks")
      .values({ ...copy, room_id: roomId })
      .execute();

    const statuses = [];
    for (const t of [a, b, a, b, a])
      statuses.push((await ingest(t, hook.token, { content: "shared" })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);

    const keys = await redis.keys(`${prefix}*`);
    expect(keys).toEqual([`${prefix}ingest:${hashIngestToken(hook.token)}`]);
    expect(keys.join()).not.toContain(hook.token);
    expect(Number(await redis.get(keys[0]!))).toBe(5);
    expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
  });
});

/**
 * A TCP proxy in front of the test Redis that the test can cut and restore, so an outage can be
 * staged without stopping a Redis others use. Restored on the same port, as Redis coming back.
 */
async function redisProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  const serve = () =>
    net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
        socket.on("error", () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.once("close", () => upstream.destroy());
      upstream.once("close", () => client.destroy());
    });
  let server = serve();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    /** Refuses new connections and drops the open ones. */
    async cut() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async restore() {
      server = serve();
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    close() {
      return this.cut();
    },
  };
}

describe("webhook_ingest rate limit across a Redis outage", { tags: ["redis"] }, () => {
  it("counts in memory while Redis is down, says so once, and shares the count again once it is back", async () => {
    const proxy = await redisProxy(new URL(TEST_REDIS_URL!));
    const direct = new Redis(TEST_REDIS_URL!);
    const prefix = `parley-test-${crypto.randomBytes(6).toString("hex")}:`;
    const warn = vi.fn();
    const info = vi.fn();
    const limiter = await createIngestRateLimiter({
      redisUrl: proxy.url,
      windowMs: 60_000,
      keyPrefix: prefix,
      log: { warn, info } as unknown as FastifyBaseLogger,
      connectTimeoutMs: 1_000,
    });
    onTestFinished(async () => {
      await limiter.close();
      await proxy.close();
      await direct.del(`${prefix}ingest:k`);
      direct.disconnect();
    });

    expect((await limiter.count("k")).current).toBe(1);
    expect((await limiter.count("k")).current).toBe(2);
    expect(await direct.get(`${prefix}ingest:k`)).toBe("2");
    expect(warn).not.toHaveBeenCalled();

    await proxy.cut();
    // Failing open: counted in this process from the outage on, one warning for all of it.
    expect((await limiter.count("k")).current).toBe(1);
    expect((await limiter.count("k")).current).toBe(2);
    expect((await limiter.count("k")).current).toBe(3);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![1])).toMatch(/Redis is unreachable/);
    expect(await direct.get(`${prefix}ingest:k`)).toBe("2");

    await proxy.restore();
    await waitFor("the limiter to reconnect", () => info.mock.calls.length > 0);
    expect(String(info.mock.calls[0]![0])).toMatch(/Redis is reachable again/);
    // Shared again: Redis's window carries on where it was.
    expect((await limiter.count("k")).current).toBe(3);
    expect(await direct.get(`${prefix}ingest:k`)).toBe("3");
    expect(warn).toHaveBeenCalledTimes(1);
  });
});

describe("webhook_ingest rate limit when Redis is unreachable", () => {
  it("fails open to per-process counting: posts still go through and the limit still holds", async () => {
    const started = Date.now();
    const t = await createTestApp(SQLITE, {
      redisUrl: "redis://127.0.0.1:1",
      rateLimitWebhookIngest: "2/10s",
    });
    try {
      expect(Date.now() - started).toBeLessThan(5000);
      const hook = await createWebhook(t);
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await ingest(t, hook.token, { content: `${i}` })).statusCode);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      const closing = Date.now();
      await t.close();
      expect(Date.now() - closing).toBeLessThan(2000);
    }
  });

  it("logs one warning per outage, not one per request", async () => {
    const warn = vi.fn();
    const log = {
      warn,
      info: vi.fn(),
      error: vi.fn(),
      debug: vi.fn(),
    } as unknown as FastifyBaseLogger;
    const limiter = await createIngestRateLimiter({
      redisUrl: "redis://127.0.0.1:1",
      windowMs: 10_000,
      keyPrefix: "unused:",
      log,
      connectTimeoutMs: 300,
    });
    try {
      const counts = [];
      for (let i = 0; i < 5; i++) counts.push((await limiter.count("k")).current);
      expect(counts).toEqual([1, 2, 3, 4, 5]);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![1])).toMatch(/Redis is unreachable/);
    } finally {
      await limiter.close();
    }
  });

  it("gives up waiting for a Redis that accepts the connection but never answers", async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as net.AddressInfo;
    const warn = vi.fn();
    const log = { warn, info: vi.fn() } as unknown as FastifyBaseLogger;
    const started = Date.now();
    const limiter = await createIngestRateLimiter({
      redisUrl: `redis://127.0.0.1:${port}`,
      windowMs: 1000,
      keyPrefix: "unused:",
      log,
      connectTimeoutMs: 300,
    });
    try {
      expect(Date.now() - started).toBeLessThan(1500);
      expect(warn).toHaveBeenCalledTimes(1);
      expect((await limiter.count("k")).current).toBe(1);
    } finally {
      await limiter.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
