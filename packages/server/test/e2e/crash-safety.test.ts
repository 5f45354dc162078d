import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it, onTestFinished } from "vitest";
import { describeEachDialect } from "../helpers/dialects.js";
import { startReceiver } from "../helpers/receiver.js";
import { killAllServers, spawnServer } from "../helpers/spawn-server.js";
import { createEndpoint } from "../helpers/fixtures.js";
import { FAST_ENV } from "../helpers/knobs.js";
import { killAfterArrivals, produceEvents, receivedUsernames, waitForAll } from "./e2e-support.js";

afterEach(killAllServers);

describeEachDialect("crash safety on $name", (dialect) => {
  it("delivers every event at least once after the server is SIGKILLed in the middle of a burst", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-crash-"));
    const database = dialect.name === "postgres" ? await dialect.open() : undefined;
    await database?.database.close();
    onTestFinished(async () => {
      await killAllServers();
      await database?.cleanup();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const receiver = await startReceiver();
    onTestFinished(() => receiver.close());
    // A slow receiver (one at a time, 50 ms each) keeps most of the burst queued when the kill lands.
    receiver.respondWith(() => ({ status: 204, delayMs: 50 }));
    const env = {
      ...FAST_ENV,
      PARLEY_WEBHOOK_PER_ENDPOINT_CONCURRENCY: "1",
      PARLEY_DATA_DIR: dataDir,
      ...database?.env,
    };

    const first = await spawnServer({ env });
    const token = first.adminToken!;
    expect(token).toBeTruthy();
    await createEndpoint({ url: first.url, token }, { url: receiver.url });
    // The kill lands once 30 deliveries have arrived: API writes and deliveries are both in flight.
    const names = Array.from({ length: 300 }, (_, i) => `crash-${i}`);
    const [acknowledged, atKill] = await Promise.all([
      produceEvents([first], token, names, { stopOnFailure: true }),
      killAfterArrivals(first, receiver, 0, 30),
    ]);
    expect(acknowledged.length).toBeGreaterThan(0);

    // Same data, new process; the receiver is fast now.
    receiver.respondWith(() => ({ status: 204 }));
    await spawnServer({ env });
    // The rows the killed process had in flight come back when its lease runs out (2 x 1 s + 5 s).
    await waitForAll(receiver, acknowledged, 30_000);
    // The new process delivered what the killed one had left queued.
    expect(receiver.requests.length).toBeGreaterThan(atKill);
    // At-least-once: only what was in flight at the kill may arrive twice.
    const twice = [...receivedUsernames(receiver).values()].filter((count) => count > 1).length;
    expect(twice).toBeLessThanOrEqual(2);
  }, 90_000);
});
