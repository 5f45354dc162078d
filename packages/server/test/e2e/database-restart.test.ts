import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { startPrivatePostgres } from "../helpers/private-postgres.js";
import { startReceiver } from "../helpers/receiver.js";
import { killAllServers, spawnServer } from "../helpers/spawn-server.js";
import { createEndpoint } from "../helpers/fixtures.js";
import { FAST_ENV } from "../helpers/knobs.js";
import { produceEvents, receivedUsernames, waitForAll } from "./e2e-support.js";

afterEach(killAllServers);

// Restarting a database is only safe on one the test owns: a private instance, started here.
describe("database restart", { tags: ["postgres", "postgres-binaries"] }, () => {
  it("recovers by itself when PostgreSQL restarts in the middle of a burst, and delivers every event", async () => {
    const pg = await startPrivatePostgres();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-dbrestart-"));
    onTestFinished(async () => {
      await killAllServers();
      await pg.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const receiver = await startReceiver();
    onTestFinished(() => receiver.close());
    receiver.respondWith(() => ({ status: 204, delayMs: 20 }));

    const server = await spawnServer({
      env: {
        ...FAST_ENV,
        PARLEY_WEBHOOK_PER_ENDPOINT_CONCURRENCY: "4",
        PARLEY_DATA_DIR: dataDir,
        DATABASE_URL: pg.url,
      },
    });
    onTestFinished((context) => {
      if (context.task.result?.state === "fail") console.error(server.output());
    });
    const token = server.adminToken!;
    await createEndpoint({ url: server.url, token }, { url: receiver.url });

    const before = await produceEvents(
      [server],
      token,
      Array.from({ length: 200 }, (_, i) => `before-${i}`),
    );
    const atRestart = receivedUsernames(receiver).size;
    expect(atRestart).toBeLessThan(200);
    await pg.restart();
    // Events keep coming once the database is back; requests that hit the gap are retried.
    const after = await produceEvents(
      [server],
      token,
      Array.from({ length: 100 }, (_, i) => `after-${i}`),
      { retry: true },
    );

    await waitForAll(receiver, [...before, ...after], 30_000);
    expect(receivedUsernames(receiver).size).toBeGreaterThanOrEqual(300);
    // The dispatcher did see the database go away (and came back without help).
    expect(server.output()).toMatch(/lost its LISTEN connection|could not (claim|record)/);
  }, 90_000);
});
