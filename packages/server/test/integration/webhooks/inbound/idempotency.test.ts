import crypto from "node:crypto";
import type { InboundWebhookWithToken } from "@parley/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect } from "../../../helpers/dialects.js";
import { startRetentionJob } from "../../../../src/webhooks/outbound/delivery-engine/retention-job.js";
import {
  expireIdempotencyKeys,
  IDEMPOTENCY_EXPIRY_BATCH,
} from "../../../../src/webhooks/inbound/idempotency/expire-idempotency-keys.js";
import {
  IDEMPOTENCY_ABANDONED_AFTER_MS,
  IDEMPOTENCY_TTL_MS,
  idempotencyKeyHash,
  runIdempotent,
  type KeptAnswer,
} from "../../../../src/webhooks/inbound/idempotency/run-idempotent.js";
import { createWebhook, ingest, ingestSlack, messagesOf } from "./inbound-helpers.js";

let keyCounter = 0;
const newKey = () => `key-${Date.now()}-${++keyCounter}`;

describeEachDialect("Idempotency-Key on ingest on $name", (dialect) => {
  let t: TestApp;
  let hook: InboundWebhookWithToken;

  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
    hook = await createWebhook(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const countIn = async (roomId: number) => (await messagesOf(t, roomId)).length;

  it("posts once and answers a repeat with the first answer and Idempotent-Replayed: true", async () => {
    const key = newKey();
    const before = await countIn(hook.roomId);
    const first = await ingest(t, hook.token, { content: "deployed" }, { "idempotency-key": key });
    expect(first.statusCode).toBe(200);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    const again = await ingest(t, hook.token, { content: "deployed" }, { "idempotency-key": key });
    expect(again.statusCode).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.headers["content-type"]).toBe(first.headers["content-type"]);
    expect(again.body).toBe(first.body);
    expect(await countIn(hook.roomId)).toBe(before + 1);
  });

  it("answers 422 idempotency_key_reused for the same key with other body bytes, posting nothing", async () => {
    const key = newKey();
    await ingest(t, hook.token, { content: "one" }, { "idempotency-key": key });
    const before = await countIn(hook.roomId);
    // Same JSON value, other bytes: a reuse too (the bytes are compared, not the meaning).
    const res = await ingest(t, hook.token, '{"content":  "one"}', { "idempotency-key": key });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: "idempotency_key_reused" });
    expect(await countIn(hook.roomId)).toBe(before);
  });

  it.each([
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["not ASCII", "clé"],
  ])("answers 400 invalid_idempotency_key for a key that is %s", async (_what, key) => {
    const before = await countIn(hook.roomId);
    const res = await ingest(t, hook.token, { content: "x" }, { "idempotency-key": key });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "invalid_idempotency_key" });
    expect(await countIn(hook.roomId)).toBe(before);
  });

  it("accepts a key of 255 printable characters, spaces included", async () => {
    const key = `${newKey()} ~!`.padEnd(255, "z");
    const res = await ingest(t, hook.token, { content: "long key" }, { "idempotency-key": key });
    expect(res.statusCode).toBe(200);
  });

  it("frees the key when the first request is refused, so a corrected retry posts", async () => {
    const key = newKey();
    const refused = await ingest(t, hook.token, { content: "" }, { "idempotency-key": key });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: "content_required" });
    const retry = await ingest(t, hook.token, { content: "fixed" }, { "idempotency-key": key });
    expect(retry.statusCode).toBe(200);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
    const third = await ingest(t, hook.token, { content: "fixed" }, { "idempotency-key": key });
    expect(third.headers["idempotent-replayed"]).toBe("true");
    expect(third.json()).toEqual(retry.json());
  });

  it("keeps keys per inbound webhook: the same key on another webhook posts there", async () => {
    const other = await createWebhook(t);
    const key = newKey();
    const a = await ingest(t, hook.token, { content: "same" }, { "idempotency-key": key });
    const b = await ingest(t, other.token, { content: "same" }, { "idempotency-key": key });
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(b.headers["idempotent-replayed"]).toBeUndefined();
    expect(b.json().messageId).not.toBe(a.json().messageId);
  });

  it("stores only a hash of the key", async () => {
    const key = newKey();
    await ingest(t, hook.token, { content: "hashed" }, { "idempotency-key": key });
    const rows = await t.ctx.db
      .selectFrom("inbound_idempotency_keys")
      .selectAll()
      .where("inbound_webhook_id", "=", hook.id)
      .execute();
    expect(JSON.stringify(rows)).not.toContain(key);
    expect(rows.map((r) => r.key_hash)).toContain(idempotencyKeyHash("key", key));
  });

  it("answers 409 idempotency_key_in_use while the first request with the key is in flight", async () => {
    const key = newKey();
    await t.ctx.db
      .insertInto("inbound_idempotency_keys")
      .values({
        inbound_webhook_id: hook.id,
        key_hash: idempotencyKeyHash("key", key),
        body_hash: "0".repeat(64),
        claimed_at: Date.now(),
        expires_at: Date.now() + IDEMPOTENCY_TTL_MS,
        status: null,
        answer_headers: null,
        answer_body: null,
      })
      .execute();
    const before = await countIn(hook.roomId);
    // The claim's body is known from the start: other bytes are a reuse even while it runs.
    const res = await ingest(t, hook.token, { content: "x" }, { "idempotency-key": key });
    expect(res.statusCode).toBe(422);
    await t.ctx.db
      .updateTable("inbound_idempotency_keys")
      .set({
        body_hash: crypto.createHash("sha256").update('{"content":"x"}').digest("hex"),
      })
      .where("key_hash", "=", idempotencyKeyHash("key", key))
      .execute();
    const busy = await ingest(t, hook.token, { content: "x" }, { "idempotency-key": key });
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toMatchObject({ code: "idempotency_key_in_use" });
    expect(busy.headers["retry-after"]).toBe("1");
    expect(await countIn(hook.roomId)).toBe(before);
  });

  it("posts exactly one message for the same key sent by 20 clients at once", async () => {
    const room = await createWebhook(t);
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        ingest(t, room.token, { content: "once" }, { "idempotency-key": key }),
      ),
    );
    expect(await countIn(room.roomId)).toBe(1);
    const posted = answers.filter(
      (r) => r.statusCode === 200 && r.headers["idempotent-replayed"] === undefined,
    );
    expect(posted).toHaveLength(1);
    for (const res of answers) {
      if (res.statusCode === 200) expect(res.json()).toEqual(posted[0]!.json());
      else expect(res.json()).toMatchObject({ code: "idempotency_key_in_use" });
    }
  });

  it("replays the Slack route's answer (200 ok) without posting again", async () => {
    const key = newKey();
    const before = await countIn(hook.roomId);
    const first = await ingestSlack(
      t,
      hook.token,
      { text: "from slack" },
      { "idempotency-key": key },
    );
    const again = await ingestSlack(
      t,
      hook.token,
      { text: "from slack" },
      { "idempotency-key": key },
    );
    expect([first.statusCode, first.body]).toEqual([200, "ok"]);
    expect([again.statusCode, again.body]).toEqual([200, "ok"]);
    expect(again.headers["content-type"]).toBe(first.headers["content-type"]);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(await countIn(hook.roomId)).toBe(before + 1);
  });

  it("answers the Slack route's bad key in Slack's shape", async () => {
    const res = await ingestSlack(t, hook.token, { text: "x" }, { "idempotency-key": "" });
    expect([res.statusCode, res.body]).toEqual([400, "invalid_idempotency_key"]);
  });
});

describeEachDialect("the idempotency claim on $name", (dialect) => {
  let t: TestApp;
  let webhookId: number;
  let clock = Date.now();
  const at = () => ({ db: t.ctx.db, now: () => clock });
  const ok = (body: string): KeptAnswer => ({ status: 200, headers: {}, body });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    webhookId = (await createWebhook(t)).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const request = (key: string, body = "b") => ({
    inboundWebhookId: webhookId,
    kind: "key",
    key,
    body: Buffer.from(body),
  });

  it("keeps the first answer for 24 hours, then answers afresh", async () => {
    const key = newKey();
    expect(await runIdempotent(at(), request(key), async () => ok("first"))).toEqual({
      answer: ok("first"),
      replayed: false,
    });
    clock += IDEMPOTENCY_TTL_MS - 1;
    // A replay's work may run (its post, losing the claim, writes nothing); its answer is not kept.
    expect(await runIdempotent(at(), request(key), async () => ok("second"))).toEqual({
      answer: ok("first"),
      replayed: true,
    });
    clock += 1;
    // Expired: neither replayed nor compared with the old body.
    expect(await runIdempotent(at(), request(key, "other"), async () => ok("third"))).toEqual({
      answer: ok("third"),
      replayed: false,
    });
    expect(await runIdempotent(at(), request(key, "other"), async () => ok("fourth"))).toEqual({
      answer: ok("third"),
      replayed: true,
    });
  });

  it("lets a request take over a claim abandoned in flight (its process died), not a live one", async () => {
    const key = newKey();
    // The first request never ends: its claim stays in flight.
    let release!: () => void;
    const stuck = runIdempotent(
      at(),
      request(key),
      () => new Promise<KeptAnswer>((resolve) => (release = () => resolve(ok("late")))),
    );
    await new Promise((r) => setTimeout(r, 50));
    await expect(runIdempotent(at(), request(key), async () => ok("x"))).rejects.toMatchObject({
      code: "idempotency_key_in_use",
    });
    clock += IDEMPOTENCY_ABANDONED_AFTER_MS + 1;
    expect(await runIdempotent(at(), request(key), async () => ok("taken over"))).toEqual({
      answer: ok("taken over"),
      replayed: false,
    });
    // The first one ends at last: its answer does not replace the one kept.
    release();
    await stuck;
    expect(await runIdempotent(at(), request(key), async () => ok("y"))).toEqual({
      answer: ok("taken over"),
      replayed: true,
    });
  });

  it("frees the key when the work throws", async () => {
    const key = newKey();
    await expect(
      runIdempotent(at(), request(key), async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await runIdempotent(at(), request(key), async () => ok("after"))).toEqual({
      answer: ok("after"),
      replayed: false,
    });
  });

  it("does not compare bodies for a sender's event id (body null)", async () => {
    const key = newKey();
    const event = (body: string) => ({
      ...request(key, body),
      kind: "github-delivery",
      body: null,
    });
    await runIdempotent(at(), event("a"), async () => ok("first"));
    expect(await runIdempotent(at(), event("b"), async () => ok("second"))).toEqual({
      answer: ok("first"),
      replayed: true,
    });
    // Another kind is another namespace.
    expect(await runIdempotent(at(), request(key), async () => ok("header"))).toEqual({
      answer: ok("header"),
      replayed: false,
    });
  });

  describe("expiry by the retention job", () => {
    it("is run by the retention job", async () => {
      const key = idempotencyKeyHash("key", newKey());
      await t.ctx.db
        .insertInto("inbound_idempotency_keys")
        .values({
          inbound_webhook_id: webhookId,
          key_hash: key,
          body_hash: "0".repeat(64),
          claimed_at: Date.now() - IDEMPOTENCY_TTL_MS - 10,
          expires_at: Date.now() - 10,
          status: 200,
          answer_headers: "{}",
          answer_body: "{}",
        })
        .execute();
      const job = startRetentionJob(t.ctx, { firstRunDelayMs: 0 });
      const gone = async () =>
        (await t.ctx.db
          .selectFrom("inbound_idempotency_keys")
          .select("key_hash")
          .where("key_hash", "=", key)
          .executeTakeFirst()) === undefined;
      for (let i = 0; i < 100 && !(await gone()); i++) await new Promise((r) => setTimeout(r, 20));
      await job.stop();
      expect(await gone()).toBe(true);
    });

    it("deletes expired keys in batches and keeps live ones", async () => {
      const now = clock;
      const rows = Array.from({ length: IDEMPOTENCY_EXPIRY_BATCH + 20 }, (_, i) => ({
        inbound_webhook_id: webhookId,
        key_hash: idempotencyKeyHash("key", `expired-${i}`),
        body_hash: "0".repeat(64),
        claimed_at: now - IDEMPOTENCY_TTL_MS - 1,
        expires_at: now - 1,
        status: 200,
        answer_headers: "{}",
        answer_body: "{}",
      }));
      await t.ctx.db.insertInto("inbound_idempotency_keys").values(rows).execute();
      const live = newKey();
      await runIdempotent(at(), request(live), async () => ok("live"));
      expect(await expireIdempotencyKeys(t.ctx, { now })).toBeGreaterThanOrEqual(rows.length);
      const left = await t.ctx.db
        .selectFrom("inbound_idempotency_keys")
        .select("key_hash")
        .where("expires_at", "<=", now)
        .execute();
      expect(left).toEqual([]);
      expect(await runIdempotent(at(), request(live), async () => ok("again"))).toMatchObject({
        replayed: true,
      });
    });
  });
});
