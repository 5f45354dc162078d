import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { leaseFor } from "../../src/webhooks/outbound/delivery-engine/dispatcher.js";
import { POSTGRES } from "../helpers/dialects.js";
import { createEndpoint } from "../helpers/fixtures.js";
import { FAST_ENV } from "../helpers/knobs.js";
import { startReceiver } from "../helpers/receiver.js";
import { killAllServers, spawnServer } from "../helpers/spawn-server.js";
import { waitFor } from "../helpers/wait-for.js";
import { produceEvents } from "./e2e-support.js";

const TIMEOUT_MS = 2_000;
/** 2 x 2 s + 5 s = 9 s. */
const LEASE_MS = leaseFor(TIMEOUT_MS);
/** Far longer than the test: the sweep cannot be what takes the killed process's deliveries. */
const SWEEP_MS = 60_000;

interface Held {
  id: number;
  body: string;
  claimedAt: number;
  leaseEnd: number;
}

describe("lease expiry: two processes on one PostgreSQL database", { tags: ["postgres"] }, () => {
  it(
    "re-sends a SIGKILLed process's deliveries from the other process within the lease + 5 s of their claim",
    { timeout: 90_000 },
    async () => {
      const database = await POSTGRES.open();
      const dirs: string[] = [];
      onTestFinished(async () => {
        await killAllServers();
        await database.cleanup();
        for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
      });
      const receiver = await startReceiver();
      onTestFinished(() => receiver.close());
      const env = (name: string) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-lease-${name}-`));
        dirs.push(dir);
        return {
          ...FAST_ENV,
          PARLEY_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
          PARLEY_WEBHOOK_SWEEP_INTERVAL_MS: String(SWEEP_MS),
          PARLEY_DATA_DIR: dir,
          ...database.env,
        };
      };
      // b runs (and has looked up the next due time at its start) before a takes anything.
      const a = await spawnServer({ env: env("a") });
      await spawnServer({ env: env("b") });
      const token = a.adminToken!;

      /** The delivery a request carries (the stored body is the bytes sent), as it is now. */
      const deliveryOf = (body: string) =>
        database.database.db
          .selectFrom("webhook_deliveries")
          .select(["id", "locked_by", "locked_until"])
          .where("body", "=", body)
          .executeTakeFirst();
      const heldByA = (row: { locked_by: string | null } | undefined) =>
        row?.locked_by?.startsWith(`${a.pid}-`) === true;
      // a's requests hang (until a is killed); b's are answered at once.
      let aRequests = 0;
      receiver.respondWith(async (request) => {
        if (!heldByA(await deliveryOf(request.body.toString("utf8")))) return { status: 204 };
        aRequests++;
        return { delayMs: 120_000 };
      });

      // Three endpoints (one receiver): a has sends in flight to each.
      for (const n of [1, 2, 3])
        await createEndpoint(
          { url: a.url, token },
          { name: `sink ${n}`, url: `${receiver.url}?n=${n}` },
        );
      // Queued through a: its own commits wake it at once, so it claims most of them (b, woken by
      // NOTIFY, may take some: those it sends and is done with).
      const names = Array.from({ length: 6 }, (_, i) => `lease-${i}`);
      let produced = false;
      const [acknowledged] = await Promise.all([
        produceEvents([a], token, names, { parallel: 6, stopOnFailure: true }).finally(
          () => (produced = true),
        ),
        (async () => {
          await waitFor("a request of a's hanging at the receiver", () => aRequests > 0, 20_000);
          // Killed while its requests hang, well within its 2 s time-out: it records nothing.
          await waitFor("more of a's", () => aRequests >= 3 || produced, 500).catch(
            () => undefined,
          );
          await a.kill("SIGKILL");
        })(),
      ]);
      const killedAt = Date.now();
      expect(acknowledged.length).toBeGreaterThan(0);

      // What a held at its death: leased to it, not recorded.
      const rows = await database.database.db
        .selectFrom("webhook_deliveries")
        .select(["id", "body", "locked_by", "locked_until", "attempts"])
        .execute();
      const held: Held[] = rows
        .filter((row) => heldByA(row))
        .map((row) => ({
          id: Number(row.id),
          body: row.body,
          leaseEnd: Number(row.locked_until),
          claimedAt: Number(row.locked_until) - LEASE_MS,
        }));
      expect(held.length, "deliveries a held when it was killed").toBeGreaterThan(0);
      for (const row of rows.filter((r) => heldByA(r))) expect(row.attempts).toBe(0);

      const resent = (row: Held) =>
        receiver.requests.find(
          (request) => request.receivedAt > killedAt && request.body.toString("utf8") === row.body,
        );
      const deadline = Math.max(...held.map((row) => row.claimedAt)) + LEASE_MS + 5_000;
      await waitFor(
        () =>
          `b to re-send a's ${held.length} deliveries (${held.filter((row) => !resent(row)).length} missing)`,
        () => held.every((row) => resent(row) !== undefined),
        Math.max(deadline - Date.now(), 0) + 10_000,
      );
      for (const row of held) {
        const request = resent(row)!;
        const delay = request.receivedAt - row.claimedAt;
        console.log(
          `delivery ${row.id}: claimed by a, re-sent by b ${delay} ms after the claim (lease ${LEASE_MS} ms)`,
        );
        // Not before the lease ran out (never two live attempts at once), and within 5 s after.
        expect(request.receivedAt).toBeGreaterThan(row.leaseEnd);
        expect(delay).toBeLessThanOrEqual(LEASE_MS + 5_000);
      }
      await waitFor("every delivery recorded SUCCESS", async () => {
        const statuses = await database.database.db
          .selectFrom("webhook_deliveries")
          .select("status")
          .execute();
        return statuses.length > 0 && statuses.every((row) => row.status === "SUCCESS");
      });
    },
  );
});
