import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../../src/app-context.js";
import { openDatabase } from "../../../src/db/open-database.js";
import { DELIVERIES_CHANNEL } from "../../../src/events/event-spine.js";
import { inTransaction } from "../../../src/events/in-transaction.js";
import { DIALECTS, TEST_DATABASE_URL } from "../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import { startDeliveryApp, waitFor, type DeliveryApp } from "./delivery-fixture.js";

const postgres = DIALECTS.find((dialect) => dialect.name === "postgres");

describe.runIf(postgres)("LISTEN/NOTIFY wake-ups on postgres", () => {
  let d: DeliveryApp;
  /** Another process's view of the same database: it commits events but runs no dispatcher. */
  let other: AppContext;
  let target: Receiver;

  beforeAll(async () => {
    // A sweep far in the future: only a NOTIFY (or the pass after reconnecting) can start a send.
    d = await startDeliveryApp(postgres!, { webhookSweepIntervalMs: 600_000 });
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
    inTransaction(other, (tx) => tx.emit("ADMIN_USER_DISABLED", { username, adminActor: "admin" }));

  it("sends a delivery committed by another process at once", async () => {
    const before = target.requests.length;
    const committed = Date.now();
    await emitElsewhere("notified");
    const [request] = (await target.waitForRequests(before + 1, 3_000)).slice(before);
    expect(JSON.parse(request!.body.toString()).data.username).toBe("notified");
    expect(request!.receivedAt - committed).toBeLessThan(1_000);
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
    let notifications = 0;
    listener.on("notification", (message) => {
      if (message.channel === DELIVERIES_CHANNEL) notifications++;
    });
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    try {
      await expect(
        inTransaction(other, async (tx) => {
          await tx.emit("ADMIN_USER_DISABLED", { username: "rolled-back", adminActor: "admin" });
          throw new Error("abort after the emit");
        }),
      ).rejects.toThrow("abort after the emit");
      // A NOTIFY sent right after the emit would already be here by the time the next one is.
      await emitElsewhere("marker");
      await waitFor("the marker's NOTIFY", () => notifications > 0);
      expect(notifications).toBe(1);

      notifications = 0;
      const before = target.requests.length;
      await Promise.all(Array.from({ length: 50 }, (_, i) => emitElsewhere(`burst-${i}`)));
      await target.waitForRequests(before + 50, 5_000);
      await new Promise((resolve) => setTimeout(resolve, 200)); // let late notifications in
      expect(notifications).toBeLessThan(50);
    } finally {
      await listener.end();
    }
  });
});
