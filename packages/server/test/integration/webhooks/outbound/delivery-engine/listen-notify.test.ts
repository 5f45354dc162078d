import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../../../../src/app-context.js";
import { openDatabase } from "../../../../../src/db/open-database.js";
import { DELIVERIES_CHANNEL } from "../../../../../src/events/event-spine.js";
import { POSTGRES, TEST_DATABASE_URL } from "../../../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startDeliveryApp, type DeliveryApp } from "./delivery-fixture.js";

describe("LISTEN/NOTIFY wake-ups on postgres", { tags: ["postgres"] }, () => {
  let d: DeliveryApp;
  /** Another process's view of the same database: it commits events but runs no dispatcher. */
  let other: AppContext;
  let target: Receiver;

  beforeAll(async () => {
    // A sweep far in the future: only a NOTIFY (or the pass after reconnecting) can start a send.
    d = await startDeliveryApp(POSTGRES, { webhookSweepIntervalMs: 600_000 });
    const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(
      d.t.ctx.db,
    );
    other = await createAppContext(d.t.ctx.config, {
      database: openDatabase({
        databaseUrl: TEST_DATABASE_URL,
        pgSchema: rows[0]!.schema,
        poolSize: 2,
      }),
    });
    target = await startReceiver();
    await d.endpoint(target.url);
    await waitFor("the dispatcher to listen", () => listenerPid());
  });
  afterAll(async () => {
    await d?.close();
    await other?.database.close();
    await target?.close();
  });

  async function listenerPid(): Promise<number | undefined> {
    const { rows } = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity
      WHERE application_name = ${`parley-deliveries ${d.t.ctx.instanceId}`} AND query LIKE 'LISTEN%'
    `.execute(other.db);
    return rows[0]?.pid;
  }
  const emitElsewhere = (username: string) =>
    other.database.transaction((tx) =>
      tx.emit("ADMIN_USER_DISABLED", { username, adminActor: "admin" }),
    );

  it("sends a delivery committed by another process when its NOTIFY arrives", async () => {
    const before = target.requests.length;
    // No sweep runs and nothing else is due: the NOTIFY is the only thing that can start this send.
    await emitElsewhere("notified");
    const [request] = (await target.waitForRequests(before + 1)).slice(before);
    expect(JSON.parse(request!.body.toString()).data.username).toBe("notified");
  });

  it("reconnects after losing its LISTEN connection and sends what was committed meanwhile", async () => {
    const pid = (await listenerPid())!;
    const before = target.requests.length;
    await sql`SELECT pg_terminate_backend(${pid})`.execute(other.db);
    // Committed while nobody listens: the NOTIFY is lost; the pass after reconnecting finds it.
    await emitElsewhere("during-the-gap");
    await target.waitForRequests(before + 1, 5_000);
    const fresh = await waitFor("a new LISTEN connection", async () => {
      const next = await listenerPid();
      return next !== undefined && next !== pid && next;
    });
    expect(fresh).not.toBe(pid);
    await emitElsewhere("after-reconnect");
    const received = await target.waitForRequests(before + 2, 3_000);
    expect(received.slice(before).map((r) => JSON.parse(r.body.toString()).data.username)).toEqual([
      "during-the-gap",
      "after-reconnect",
    ]);
  });

  it("sends NOTIFY only after a commit, coalescing a burst of commits into a few", async () => {
    const listener = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await listener.connect();
    const payloads: string[] = [];
    listener.on("notification", (message) => {
      if (message.channel === DELIVERIES_CHANNEL) payloads.push(message.payload ?? "");
    });
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    let markers = 0;
    /**
     * How many NOTIFYs the spine sent since the last call: once it has none in flight, a marker
     * NOTIFY of our own is sent and awaited; notifications arrive in commit order, so every one
     * the spine sent before it is in by then.
     */
    const spineNotifications = async (): Promise<number> => {
      await other.spine.notifySettled();
      const marker = `marker-${++markers}`;
      await sql`SELECT pg_notify(${DELIVERIES_CHANNEL}, ${marker})`.execute(other.db);
      await waitFor(`the ${marker} notification`, () => payloads.includes(marker));
      // Other test files share this database, and NOTIFY channels are database-wide: count only
      // the notifications that name the committing process.
      const count = payloads.filter((payload) => payload === other.instanceId).length;
      payloads.length = 0;
      return count;
    };
    try {
      await spineNotifications(); // what earlier tests left in flight
      const before = target.requests.length;

      await expect(
        other.database.transaction(async (tx) => {
          await tx.emit("ADMIN_USER_DISABLED", { username: "rolled-back", adminActor: "admin" });
          throw new Error("abort after the emit");
        }),
      ).rejects.toThrow("abort after the emit");
      expect(await spineNotifications()).toBe(0);

      await emitElsewhere("committed");
      expect(await spineNotifications()).toBe(1);

      await Promise.all(Array.from({ length: 50 }, (_, i) => emitElsewhere(`burst-${i}`)));
      const burst = await spineNotifications();
      expect(burst).toBeGreaterThan(0);
      expect(burst).toBeLessThan(50);
      await target.waitForRequests(before + 51);
    } finally {
      await listener.end();
    }
  });
});
