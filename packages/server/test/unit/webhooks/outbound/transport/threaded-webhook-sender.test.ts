import { threadId, type Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../../src/config/load-config.js";
import { sendThreadsFor } from "../../../../../src/webhooks/outbound/delivery-engine/create-dispatcher.js";
import {
  createThreadedWebhookSender,
  type ThreadedSenderOptions,
} from "../../../../../src/webhooks/outbound/transport/threaded-webhook-sender.js";
import type { WebhookSender } from "../../../../../src/webhooks/outbound/transport/webhook-sender.js";
import { latch } from "../../../../helpers/latch.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  cleanups.push(() => started.close());
  return started;
}

/** A threaded sender whose threads the test sees as they start. */
function threadedSender(options: Partial<ThreadedSenderOptions> = {}) {
  const started: Worker[] = [];
  const sender: WebhookSender = createThreadedWebhookSender({
    threads: 1,
    timeoutMs: 5_000,
    allowPrivateNetworks: true,
    allowHttp: true,
    onThreadStart: (worker) => started.push(worker),
    ...options,
  });
  cleanups.push(() => sender.close());
  return { sender, started };
}

const BODY = new TextEncoder().encode(JSON.stringify({ event: "WEBHOOK_TEST", data: { n: 1 } }));

describe("threaded webhook sender", () => {
  it("makes the attempt on a worker thread: the receiver gets the request, the caller its answer", async () => {
    const target = await receiver();
    target.respondWith(() => ({ status: 201, body: "made", headers: { "x-answer": "yes" } }));
    const { sender, started } = threadedSender();

    const outcome = await sender.send({
      url: target.url,
      body: BODY,
      signature: "sha256=abc",
      headers: { "webhook-id": "evt_1" },
      auth: { type: "bearer", token: "tok_1" },
    });

    expect(outcome).toMatchObject({
      ok: true,
      responseStatus: 201,
      responseBody: "made",
      error: null,
    });
    expect(outcome.responseHeaders?.["x-answer"]).toBe("yes");
    expect(outcome.startedAt).toBeInstanceOf(Date);
    expect(started).toHaveLength(1);
    expect(started[0]!.threadId).not.toBe(threadId);
    const [request] = target.requests;
    expect(request!.body.equals(Buffer.from(BODY))).toBe(true);
    expect(request!.headers).toMatchObject({
      "x-webhook-signature-256": "sha256=abc",
      "webhook-id": "evt_1",
      authorization: "Bearer tok_1",
      "content-type": "application/json",
    });
    expect(sender.stats!().connections).toBe(1);
  });

  it("keeps the SSRF guard on the thread: a loopback receiver is refused without private networks", async () => {
    const target = await receiver();
    const { sender } = threadedSender({ allowPrivateNetworks: false });

    const outcome = await sender.send({ url: target.url, body: BODY });

    expect(outcome.ok).toBe(false);
    expect(outcome.responseStatus).toBeNull();
    expect(outcome.error).toMatch(/refused/);
    expect(target.requests).toHaveLength(0);
  });

  it("holds the attempt's time-out on the thread", async () => {
    const target = await receiver();
    const hold = latch();
    cleanups.push(() => hold.release());
    target.respondWith(async () => {
      await hold.opened;
      return { status: 204 };
    });
    const { sender } = threadedSender({ timeoutMs: 300 });

    const outcome = await sender.send({ url: target.url, body: BODY });

    expect(outcome.ok).toBe(false);
    expect(outcome.error).toBe("timed out after 300 ms waiting for the response");
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
  });

  it("gives each attempt to the thread with the fewest in flight, starting threads only as needed", async () => {
    const target = await receiver();
    const hold = latch();
    cleanups.push(() => hold.release());
    const { sender, started } = threadedSender({ threads: 3 });

    // One at a time: the first thread is always free, so it is the only one started.
    expect((await sender.send({ url: target.url, body: BODY })).ok).toBe(true);
    expect((await sender.send({ url: target.url, body: BODY })).ok).toBe(true);
    expect(started).toHaveLength(1);

    // Two held at once, then a third: each goes to an idle thread.
    target.respondWith(async () => {
      await hold.opened;
      return { status: 204 };
    });
    const held = [
      sender.send({ url: target.url, body: BODY }),
      sender.send({ url: target.url, body: BODY }),
      sender.send({ url: target.url, body: BODY }),
    ];
    await target.waitForRequests(5);
    expect(started).toHaveLength(3);
    hold.release();
    expect((await Promise.all(held)).map((outcome) => outcome.ok)).toEqual([true, true, true]);
    // One connection per thread that sent.
    expect(sender.stats!().connections).toBe(3);
  });

  it("starts every thread before the first attempt when asked to get ready", async () => {
    const target = await receiver();
    const started: Worker[] = [];
    const sender = createThreadedWebhookSender({
      threads: 2,
      timeoutMs: 5_000,
      allowPrivateNetworks: true,
      allowHttp: true,
      onThreadStart: (worker) => started.push(worker),
    });
    cleanups.push(() => sender.close());

    await sender.ready();
    expect(started).toHaveLength(2);
    expect((await sender.send({ url: target.url, body: BODY })).ok).toBe(true);
    expect(started).toHaveLength(2);
  });

  it("fails the attempts of a thread that dies with an outcome, and replaces the thread", async () => {
    const target = await receiver();
    const hold = latch();
    cleanups.push(() => hold.release());
    target.respondWith(async (_request, index) => {
      if (index === 0) await hold.opened;
      return { status: 204 };
    });
    const { sender, started } = threadedSender();

    const inFlight = sender.send({ url: target.url, body: BODY });
    await target.waitForRequests(1);
    await started[0]!.terminate();

    const failed = await inFlight;
    expect(failed.ok).toBe(false);
    expect(failed.responseStatus).toBeNull();
    expect(failed.error).toMatch(/^the send thread exited \(code \d+\) before the attempt ended$/);

    // Within a second of a death no thread starts: the attempt fails at once, saying why.
    const early = await sender.send({ url: target.url, body: BODY });
    expect(early.ok).toBe(false);
    expect(early.error).toMatch(/^no send thread is running \(the send thread exited/);
    expect(started).toHaveLength(1);

    // Then a new thread takes the attempts.
    const later = await waitFor(
      "a replacement thread",
      async () => {
        const outcome = await sender.send({ url: target.url, body: BODY });
        return outcome.ok ? outcome : undefined;
      },
      5_000,
    );
    expect(later.responseStatus).toBe(204);
    expect(started).toHaveLength(2);
  });

  it("closes after the attempts in flight end, then answers every attempt as closed", async () => {
    const target = await receiver();
    target.respondWith(() => ({ status: 204, delayMs: 200 }));
    const { sender, started } = threadedSender();
    let exited = false;

    const inFlight = sender.send({ url: target.url, body: BODY });
    await target.waitForRequests(1);
    started[0]!.once("exit", () => (exited = true));
    await sender.close();

    expect(await inFlight).toMatchObject({ ok: true, error: null });
    expect(exited).toBe(true);
    const after = await sender.send({ url: target.url, body: BODY });
    expect(after).toMatchObject({ ok: false, error: "sender is closed" });
  });
});

describe("PARLEY_WEBHOOK_SEND_THREADS", () => {
  it("defaults to the cores less one from 3 cores up, on 2 cores to one on SQLite and none on PostgreSQL", () => {
    const sqlite = { webhookSendThreads: undefined, databaseUrl: undefined };
    const postgres = { webhookSendThreads: undefined, databaseUrl: "postgres://db/parley" };
    expect(loadConfig({}).webhookSendThreads).toBeUndefined();
    expect(sendThreadsFor(sqlite, 8)).toBe(7);
    expect(sendThreadsFor(postgres, 8)).toBe(7);
    expect(sendThreadsFor(sqlite, 3)).toBe(2);
    expect(sendThreadsFor(sqlite, 2)).toBe(1);
    expect(sendThreadsFor(postgres, 2)).toBe(0);
    expect(sendThreadsFor(sqlite, 1)).toBe(0);
    expect(sendThreadsFor({ ...postgres, webhookSendThreads: 2 }, 1)).toBe(2);
    expect(sendThreadsFor({ ...sqlite, webhookSendThreads: 0 }, 8)).toBe(0);
    expect(loadConfig({ PARLEY_WEBHOOK_SEND_THREADS: "0" }).webhookSendThreads).toBe(0);
    expect(sendThreadsFor(loadConfig({ PARLEY_WEBHOOK_SEND_THREADS: "3" }))).toBe(3);
    expect(() => loadConfig({ PARLEY_WEBHOOK_SEND_THREADS: "two" })).toThrow(
      /PARLEY_WEBHOOK_SEND_THREADS.*expected a whole number/,
    );
  });
});
