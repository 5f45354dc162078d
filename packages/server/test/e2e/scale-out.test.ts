import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DIALECTS, type TestDatabase } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";
import {
  createEndpoint,
  FAST_ENV,
  killAfterArrivals,
  metricValue,
  produceEvents,
  receivedUsernames,
  waitForAll,
} from "./e2e-support.js";

const postgres = DIALECTS.find((dialect) => dialect.name === "postgres");

describe.runIf(postgres)("scale-out: two processes on one PostgreSQL database", () => {
  let database: TestDatabase;
  let receiver: Receiver;
  let a: SpawnedServer;
  let b: SpawnedServer;
  let token: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    database = await postgres!.open();
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
    await createEndpoint(a, token, receiver.url);
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
    // Give a duplicate, if any, time to show up.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
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
