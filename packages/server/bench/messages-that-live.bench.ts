// Messages that live, on each database (SQLite always; PostgreSQL too when PARLEY_TEST_DATABASE_URL
// is set), through the services the routes call (no HTTP: what is measured is the reaction path and
// the catch-up query, not Fastify):
//
// - reactions: 50 members of one room add and take back 🎉 on ONE hot message at once, each in a
//   loop for `seconds` (setReaction: the message row locked, INSERT ... ON CONFLICT DO NOTHING /
//   DELETE, the event queued). Throughput in operations per second; afterwards the stored rows
//   must be exactly the members whose last operation was an add (no lost or doubled reaction), and
//   the message's count must say the same.
// - updatedSince: one room of `messages` messages (1,000,000; 100,000 with --quick) seeded with
//   bulk SQL, of which 1,000 changed recently; `listMessageChanges` (GET
//   .../messages?updatedSince=) for a time among those changes, first page of 50, `queries` times.
//   p95 must stay under 50 ms: the index messages_room_updated, not a scan.
//
// Run: npx tsx packages/server/bench/messages-that-live.bench.ts [--quick]
// (also part of `npm run bench -w @parley/server` as `messages-that-live`, through bench/run-all.ts)
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import type { AppContext } from "../src/app-context.js";
import type { Principal } from "../src/auth/principal.js";
import { listMessageChanges } from "../src/chat/messages-service.js";
import { setReaction } from "../src/chat/react-to-message.js";
import { listReactionSummaries } from "../src/chat/reactions-repository.js";
import {
  createPostingRoom,
  openTargets,
  percentile,
  postOne,
  type BenchTarget,
} from "./bench-targets.js";

export interface MessagesThatLiveOptions {
  /** Seconds of the reaction run. */
  seconds: number;
  /** Messages of the updatedSince room. */
  messages: number;
  /** updatedSince queries timed. */
  queries: number;
}

const USERS = 50;
const RECENT_CHANGES = 1_000;
const P95_LIMIT_MS = 50;

export function messagesThatLiveOptionsFrom(flags: { quick?: boolean }): MessagesThatLiveOptions {
  return flags.quick
    ? { seconds: 3, messages: 100_000, queries: 100 }
    : { seconds: 10, messages: 1_000_000, queries: 300 };
}

async function addMembers(ctx: AppContext, roomId: number, count: number): Promise<Principal[]> {
  const now = Date.now();
  const members: Principal[] = [];
  for (let i = 0; i < count; i++) {
    const username = `reactor-${roomId}-${i}`;
    const user = await ctx.db
      .insertInto("users")
      .values({
        username,
        display_name: username,
        role: "user",
        status: "active",
        created_at: now,
        updated_at: now,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await ctx.db
      .insertInto("room_members")
      .values({ room_id: roomId, user_id: user.id, joined_at: now })
      .execute();
    members.push({ userId: user.id, username, role: "user" });
  }
  return members;
}

async function reactionsRun(target: BenchTarget, seconds: number): Promise<void> {
  const { ctx } = target;
  const room = await createPostingRoom(ctx);
  const messageId = await postOne(ctx, room);
  const members = await addMembers(ctx, room.roomId, USERS);
  const reacted = new Map<string, boolean>();
  let operations = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    members.map(async (member, i) => {
      // Each member alternates add and take back, odd ones starting with a take back, until the
      // time is up; what it did last is what must be stored.
      let present = i % 2 === 0;
      do {
        await setReaction(ctx, member, { roomId: room.roomId, messageId, emoji: "tada" }, present);
        reacted.set(member.username, present);
        operations++;
        present = !present;
      } while (performance.now() < until);
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const expected = [...reacted]
    .filter(([, present]) => present)
    .map(([name]) => name)
    .sort();
  const rows = await ctx.db
    .selectFrom("message_reactions")
    .innerJoin("users", "users.id", "message_reactions.user_id")
    .select("users.username")
    .where("message_id", "=", messageId)
    .execute();
  const stored = rows.map((row) => row.username).sort();
  const summary = (await listReactionSummaries(ctx.db, [messageId])).get(messageId) ?? [];
  const count = summary[0]?.count ?? 0;
  const ok = JSON.stringify(stored) === JSON.stringify(expected) && count === expected.length;
  console.log(
    `${target.name.padEnd(10)} reactions: ${USERS} members on one message, ${operations} PUT/DELETE in ` +
      `${elapsed.toFixed(1)} s = ${Math.round(operations / elapsed)}/s; ` +
      `${expected.length} ended with a reaction, stored ${stored.length}, count ${count}: ` +
      (ok ? "no lost or doubled reactions" : "MISMATCH"),
  );
  if (!ok)
    throw new Error(
      `${target.name}: the stored reactions do not match the members' last operations`,
    );
}

/** One room of `count` messages written with one INSERT ... SELECT, the last RECENT_CHANGES changed recently. */
async function seedRoom(
  target: BenchTarget,
  count: number,
): Promise<{ roomId: number; member: Principal; recentFrom: number }> {
  const { ctx } = target;
  const room = await createPostingRoom(ctx);
  const [member] = await addMembers(ctx, room.roomId, 1);
  const hookId = room.sender.type === "integration" ? room.sender.inboundWebhookId : null;
  const base = Date.now() - 30 * 24 * 3600 * 1000;
  const values = sql`${room.roomId}, null, ${hookId}, 'CI', null, 'seeded message', 'markdown',
    'none', ${base} + n, ${base} + n`;
  const columns = sql`("room_id", "sender_user_id", "inbound_webhook_id", "sender_display_name",
    "sender_avatar_url", "content", "content_format", "moderation_status", "created_at",
    "updated_at")`;
  if (target.name === "SQLite") {
    await sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${count})
      insert into "messages" ${columns} select ${values} from seq`.execute(ctx.db);
  } else {
    await sql`insert into "messages" ${columns}
      select ${values} from generate_series(1, ${count}::bigint) as n`.execute(ctx.db);
  }
  // The recent changes: every (count / RECENT_CHANGES)th message, as if edited, reacted to or
  // answered in the last minutes, in id order.
  const stride = Math.floor(count / RECENT_CHANGES);
  const recentFrom = Date.now() - 10 * 60 * 1000;
  await sql`update "messages" set "updated_at" = ${recentFrom} + ("id" % ${count * 2})
    where "room_id" = ${room.roomId} and "id" % ${stride} = 0`.execute(ctx.db);
  if (target.name === "PostgreSQL") await sql`analyze "messages"`.execute(ctx.db);
  else await sql`analyze`.execute(ctx.db);
  return { roomId: room.roomId, member: member!, recentFrom };
}

async function updatedSinceRun(target: BenchTarget, options: MessagesThatLiveOptions) {
  const seedStarted = performance.now();
  const { roomId, member, recentFrom } = await seedRoom(target, options.messages);
  const seeded = (performance.now() - seedStarted) / 1000;
  const since = recentFrom - 1;
  const first = await listMessageChanges(target.ctx, member, roomId, { since, limit: 50 });
  const times: number[] = [];
  for (let i = 0; i < options.queries; i++) {
    const started = performance.now();
    await listMessageChanges(target.ctx, member, roomId, {
      since: since + Math.floor(Math.random() * options.messages),
      limit: 50,
    });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const p95 = percentile(times, 95);
  console.log(
    `${target.name.padEnd(10)} updatedSince: ${options.messages.toLocaleString("en")} messages ` +
      `(seeded in ${seeded.toFixed(1)} s), ${RECENT_CHANGES} recent changes, first page ` +
      `${first.items.length} items; ${options.queries} queries p50 ${percentile(times, 50).toFixed(2)} ms, ` +
      `p95 ${p95.toFixed(2)} ms (limit ${P95_LIMIT_MS} ms)${p95 < P95_LIMIT_MS ? "" : ": OVER"}`,
  );
  if (first.items.length !== 50) throw new Error(`${target.name}: the first page is not full`);
  if (p95 >= P95_LIMIT_MS) throw new Error(`${target.name}: updatedSince p95 ${p95} ms`);
}

export async function runMessagesThatLiveBench(options: MessagesThatLiveOptions): Promise<void> {
  for (const open of await openTargets()) {
    const target = await open();
    try {
      await reactionsRun(target, options.seconds);
      await updatedSinceRun(target, options);
    } finally {
      await target.cleanup();
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: "boolean" } } });
  await runMessagesThatLiveBench(messagesThatLiveOptionsFrom(values));
}
