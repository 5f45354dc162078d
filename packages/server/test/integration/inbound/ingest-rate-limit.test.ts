import crypto from "node:crypto";
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FastifyBaseLogger } from "fastify";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { DIALECTS } from "../../helpers/dialects.js";
import { createIngestRateLimiter } from "../../../src/webhooks/inbound/ingest-rate-limit.js";
import { hashIngestToken } from "../../../src/webhooks/inbound/ingest-token.js";
import {
  createRoom,
  createWebhook,
  ingest,
  ingestSlack,
  messagesOf,
  unknownToken,
} from "./inbound-helpers.js";

const REDIS_URL = process.env.PARLEY_TEST_REDIS_URL || "redis://127.0.0.1:6379";

/** A real connection attempt, made once when the file loads. */
async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    retryStrategy: () => null,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

const redisAvailable = await redisAnswers(REDIS_URL);
if (!redisAvailable) {
  console.warn(
    `Redis does not answer at ${REDIS_URL}: the shared rate-limit tests are SKIPPED (set PARLEY_TEST_REDIS_URL)`,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(DIALECTS)("webhook_ingest rate limit on $name", (dialect) => {
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

describe.runIf(redisAvailable)("webhook_ingest rate limit shared through Redis", () => {
  const prefix = `parley-test-${crypto.randomBytes(6).toString("hex")}:`;
  let a: TestApp;
  let b: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    const settings = {
      redisUrl: REDIS_URL,
      redisKeyPrefix: prefix,
      rateLimitWebhookIngest: "3/10s",
    };
    a = await createTestApp(DIALECTS[0], settings);
    b = await createTestApp(DIALECTS[0], settings);
    redis = new Redis(REDIS_URL);
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
    const roomId = await createRoom(b);
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

describe("webhook_ingest rate limit when Redis is unreachable", () => {
  it("fails open to per-process counting: posts still go through and the limit still holds", async () => {
    const started = Date.now();
    const t = await createTestApp(DIALECTS[0], {
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
