import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES, type TestDatabase } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";
import { createEndpoint } from "../helpers/fixtures.js";
import { FAST_ENV, FAST_KNOBS } from "../helpers/knobs.js";
import {
  killAfterArrivals,
  metricValue,
  produceEvents,
  receivedUsernames,
  waitForAll,
} from "./e2e-support.js";

describe("scale-out: two processes on one PostgreSQL database", { tags: ["postgres"] }, () => {
  let database: TestDatabase;
  let receiver: Receiver;
  let a: SpawnedServer;
  let b: SpawnedServer;
  let token: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    database = await POSTGRES.open();
    await database.database.close();
    receiver = await startReceiver();
    const env = (name: string) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-${name}-`));
      dirs.push(dir);
      return {
        ...FAST_ENV,
        PARLEY_WEBHOOK_PER_ENDPOINT_CONCURRENCY: "4",
        PARLEY_DATA_DIR: dir,
        ...database.env,
      };
    };
    // One after the other: the first creates the admin user and prints its token; the keys are
    // in the database, so the token is good on both.
    a = await spawnServer({ env: env("a") });
    b = await spawnServer({ env: env("b") });
    token = a.adminToken!;
    await createEndpoint({ url: a.url, token }, { url: receiver.url });
  });
  afterEach(async () => {
    receiver.respondWith(() => ({ status: 204 }));
  });
  afterAll(async () => {
    await killAllServers();
    await receiver?.close();
    await database?.cleanup();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("delivers 500 events exactly once between them when nothing fails", async () => {
    const names = Array.from({ length: 500 }, (_, i) => `both-${i}`);
    const acknowledged = await produceEvents([a, b], token, names);
    await waitForAll(receiver, acknowledged, 30_000);
    // A duplicate would be an attempt already in flight: a row is only claimed while due, and
    // every row was claimed, sent and recorded before its request arrived. An attempt lasts at
    // most the time-out (the sender aborts it), so waiting that long lets any duplicate land.
    await new Promise((resolve) => setTimeout(resolve, FAST_KNOBS.webhookTimeoutMs));
    const seen = receivedUsernames(receiver);
    expect(seen.size).toBe(500);
    expect(receiver.requests).toHaveLength(500);
    const byA = await metricValue(a, 'parley_webhook_attempts_total{outcome="success"}');
    const byB = await metricValue(b, 'parley_webhook_attempts_total{outcome="success"}');
    expect(byA + byB).toBe(500);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
  }, 60_000);

  it("finishes the work of a process SIGKILLed in the middle of the stream", async () => {
    const before = receiver.requests.length;
    receiver.respondWith(() => ({ status: 204, delayMs: 40 }));
    const names = Array.from({ length: 300 }, (_, i) => `survivor-${i}`);
    // a is killed once 60 of these have arrived, while b still takes events.
    const [acknowledged, atKill] = await Promise.all([
      produceEvents([b], token, names),
      killAfterArrivals(a, receiver, before, 60),
    ]);
    expect(acknowledged).toHaveLength(300);
    expect(atKill).toBeLessThan(300);
    receiver.respondWith(() => ({ status: 204 }));
    // b takes over everything, a's leased rows once their lease (2 x 1 s + 5 s) runs out.
    await waitForAll(receiver, acknowledged, 30_000);
    const seen = receivedUsernames(receiver);
    for (const name of acknowledged) expect(seen.get(name)).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
