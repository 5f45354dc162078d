import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { leaseFor } from "../../src/webhooks/outbound/delivery-engine/dispatcher.js";
import { POSTGRES } from "../helpers/dialects.js";
import { apiFor, createEndpoint } from "../helpers/fixtures.js";
import { FAST_ENV } from "../helpers/knobs.js";
import { startReceiver, type RecordedRequest } from "../helpers/receiver.js";
import { killAllServers, spawnServer } from "../helpers/spawn-server.js";
import { waitFor } from "../helpers/wait-for.js";

/** Long enough to kill the process while its first sends still hang; lease 2 x 3 s + 5 s. */
const TIMEOUT_MS = 3_000;
const LEASE_MS = leaseFor(TIMEOUT_MS);
const ROOMS = 6;
const PER_ROOM = 8;

function message(request: RecordedRequest): { roomId: number; messageId: number } {
  const { data } = JSON.parse(request.body.toString("utf8")) as {
    data: { roomId: number; messageId: number };
  };
  return data;
}

describe("ordered lanes: two processes on one PostgreSQL database", { tags: ["postgres"] }, () => {
  it(
    "never lets a later event of a room overtake an earlier one when a process is SIGKILLed with heads in flight",
    { timeout: 120_000 },
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
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-lanes-${name}-`));
        dirs.push(dir);
        return {
          ...FAST_ENV,
          PARLEY_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
          PARLEY_DATA_DIR: dir,
          ...database.env,
        };
      };
      const a = await spawnServer({ env: env("a") });
      const b = await spawnServer({ env: env("b") });
      const token = a.adminToken!;

      const leasedTo = async (body: string) =>
        (
          await database.database.db
            .selectFrom("webhook_deliveries")
            .select("locked_by")
            .where("body", "=", body)
            .executeTakeFirst()
        )?.locked_by ?? null;
      // a's sends hang until it is killed; b's are answered, the first attempt of every fourth
      // message with a 500 (so lanes also wait for retries).
      let aRequests = 0;
      const attempts = new Map<string, number>();
      receiver.respondWith(async (request) => {
        const body = request.body.toString("utf8");
        if ((await leasedTo(body))?.startsWith(`${a.pid}-`)) {
          aRequests++;
          return { delayMs: 120_000 };
        }
        const n = (attempts.get(body) ?? 0) + 1;
        attempts.set(body, n);
        return { status: message(request).messageId % 4 === 0 && n === 1 ? 500 : 204 };
      });

      await createEndpoint(
        { url: a.url, token },
        { name: "ordered", url: receiver.url, events: ["MESSAGE_CREATED"], ordering: "room" },
      );
      const viaB = apiFor({ url: b.url, token });
      const rooms: number[] = [];
      for (let i = 0; i < ROOMS; i++)
        rooms.push((await viaB("POST /api/rooms", { name: `lane-${i}` })).data.id);
      // Each room's messages one after another (so their commit order is their id order), the
      // rooms side by side; a hears of them by NOTIFY and claims heads too.
      const posted = new Map<number, number[]>();
      await Promise.all(
        rooms.map(async (roomId) => {
          const ids: number[] = [];
          for (let i = 0; i < PER_ROOM; i++) {
            const { data } = await viaB("POST /api/rooms/{roomId}/messages", {
              roomId,
              content: `message ${i}`,
            });
            ids.push(data.id);
          }
          posted.set(roomId, ids);
        }),
      );
      await waitFor("a send of a's hanging at the receiver", () => aRequests > 0, 20_000);
      await waitFor("a second one", () => aRequests >= 2, 300).catch(() => undefined);
      await a.kill("SIGKILL");
      const killedAt = Date.now();

      // The heads a held at its death: leased to it, never recorded.
      const held = (
        await database.database.db
          .selectFrom("webhook_deliveries")
          .select(["id", "room_id", "message_id", "locked_by", "locked_until", "attempts"])
          .execute()
      ).filter((row) => row.locked_by?.startsWith(`${a.pid}-`));
      expect(held.length, "heads a held when it was killed").toBeGreaterThan(0);

      const everyMessage = [...posted.values()].flat();
      const arrived = () => new Set(receiver.requests.map((r) => message(r).messageId));
      await waitFor(
        () =>
          `every message at the receiver (${everyMessage.filter((id) => !arrived().has(id)).length} missing)`,
        () => everyMessage.every((id) => arrived().has(id)),
        LEASE_MS + 30_000,
      );

      // Per room: each message's attempts all before the first of the next message; a resent head
      // (a's, after its lease) is a repeat of the last one, never one that comes back later.
      for (const roomId of rooms) {
        const order = posted.get(roomId)!;
        const seen = receiver.requests
          .map(message)
          .filter((m) => m.roomId === roomId)
          .map((m) => m.messageId);
        const distinct = seen.filter((id, i) => i === 0 || seen[i - 1] !== id);
        expect(distinct, `room ${roomId}: ${seen.join(" ")}`).toEqual(order);
      }
      // a's heads were sent again (by b) only once their lease ran out, and their rooms' later
      // messages after them.
      for (const row of held) {
        const times = receiver.requests
          .filter((r) => message(r).messageId === Number(row.message_id))
          .map((r) => r.receivedAt);
        const resent = times.filter((at) => at > killedAt);
        expect(resent.length, `head ${row.id} re-sent`).toBeGreaterThan(0);
        expect(Math.min(...resent)).toBeGreaterThan(Number(row.locked_until));
      }
      await waitFor("every delivery recorded SUCCESS", async () => {
        const statuses = await database.database.db
          .selectFrom("webhook_deliveries")
          .select("status")
          .execute();
        return (
          statuses.length === everyMessage.length && statuses.every((r) => r.status === "SUCCESS")
        );
      });
    },
  );
});
