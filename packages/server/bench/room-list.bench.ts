// The room list with unread and mention counts (GET /api/rooms, scope joined), on each database
// (SQLite always; PostgreSQL too when PARLEY_TEST_DATABASE_URL is set), through the service the
// route calls (listRooms: no HTTP, what is measured is the query):
//
// - a reader who is a member of `rooms` rooms (200), each of `messages` top-level messages (500)
//   from someone else, one in ten mentioning the reader; the reader's marker in the middle of each
//   room (so 250 unread per room, 50,000 in all); plus `otherRooms` rooms the reader is not in,
//   so the messages table holds more than their rooms (1,000 more rooms of 500: 600,000 messages
//   in all; 100 with --quick);
// - one list of all of them (`limit=200`), `queries` times: p50 and p95, which must stay under
//   50 ms (issue 24). Each answer is checked: every room 250 unread and 25 mentions.
//
// Run: npx tsx packages/server/bench/room-list.bench.ts [--quick]
// (also part of `npm run bench -w @parley/server` as `room-list`, through bench/run-all.ts)
import os from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import type { Principal } from "../src/auth/principal.js";
import { listRooms } from "../src/chat/rooms-service.js";
import pg from "pg";
import {
  benchDatabaseUrl,
  openPostgresTarget,
  openSqliteTarget,
  percentile,
  type BenchTarget,
} from "./bench-targets.js";
import { startCpuMeter, taggedUrl } from "./cpu-accounting.js";

/** PostgreSQL's backends serving the benchmark's pool carry this application_name. */
const TAG = "parley-room-list-bench";

export interface RoomListOptions {
  /** Rooms the reader is in. */
  rooms: number;
  /** Rooms the reader is not in (more rows in the tables, none of them the reader's). */
  otherRooms: number;
  /** Top-level messages per room. */
  messages: number;
  /** Lists timed. */
  queries: number;
}

const P95_LIMIT_MS = 50;

export function roomListOptionsFrom(flags: { quick?: boolean }): RoomListOptions {
  return flags.quick
    ? { rooms: 200, otherRooms: 100, messages: 500, queries: 50 }
    : { rooms: 200, otherRooms: 1_000, messages: 500, queries: 200 };
}

async function createUser(target: BenchTarget, username: string): Promise<number> {
  const now = Date.now();
  const row = await target.ctx.db
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
  return row.id;
}

/**
 * The rooms and their messages, written with bulk SQL: the messages of all rooms interleaved in
 * id order, as a day of chat writes them.
 */
async function seed(target: BenchTarget, options: RoomListOptions): Promise<Principal> {
  const { db } = target.ctx;
  const readerId = await createUser(target, "reader");
  const senderId = await createUser(target, "sender");
  const now = Date.now();
  const roomIds: number[] = [];
  for (let i = 0; i < options.rooms + options.otherRooms; i++) {
    const room = await db
      .insertInto("rooms")
      .values({
        name: `room-${i}`,
        kind: "room",
        created_by: senderId,
        deleted_at: null,
        created_at: now,
        dm_key: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    roomIds.push(room.id);
  }
  const mine = roomIds.slice(0, options.rooms);
  const members = [
    ...roomIds.map((roomId) => ({ room_id: roomId, user_id: senderId, joined_at: now })),
    ...mine.map((roomId) => ({ room_id: roomId, user_id: readerId, joined_at: now })),
  ];
  for (let i = 0; i < members.length; i += 500)
    await db
      .insertInto("room_members")
      .values(members.slice(i, i + 500))
      .execute();

  const base = now - 24 * 3600 * 1000;
  const columns = sql`("room_id", "sender_user_id", "inbound_webhook_id", "sender_display_name",
    "sender_avatar_url", "content", "content_format", "moderation_status", "created_at",
    "updated_at")`;
  const values = sql`r."id", ${senderId}, null, 'sender', null, 'seeded message @reader',
    'markdown', 'none', ${base} + n, ${base} + n`;
  const first = roomIds[0]!;
  const last = roomIds[roomIds.length - 1]!;
  if (target.name === "SQLite") {
    await sql`with recursive seq(n) as (select 1 union all select n + 1 from seq
        where n < ${options.messages})
      insert into "messages" ${columns}
      select ${values} from seq, "rooms" r where r."id" between ${first} and ${last}
      order by n, r."id"`.execute(db);
  } else {
    await sql`insert into "messages" ${columns}
      select ${values} from generate_series(1, ${options.messages}::bigint) as n, "rooms" r
      where r."id" between ${first} and ${last} order by n, r."id"`.execute(db);
  }
  // One message in ten of each room mentions the reader (the 10th, 20th, ...).
  await sql`insert into "message_mentions" ("user_id", "room_id", "message_id")
    select ${readerId}, m."room_id", m."id" from "messages" m
    where m."room_id" between ${mine[0]!} and ${mine[mine.length - 1]!}
      and (m."created_at" - ${base}) % 10 = 0`.execute(db);
  // The reader's marker: the room's message in the middle.
  await sql`update "room_members" set "last_read_message_id" = (
      select m."id" from "messages" m where m."room_id" = "room_members"."room_id"
      order by m."id" limit 1 offset ${Math.floor(options.messages / 2) - 1})
    where "user_id" = ${readerId}`.execute(db);
  if (target.name === "PostgreSQL") await sql`vacuum analyze`.execute(db);
  else await sql`analyze`.execute(db);
  return { userId: readerId, username: "reader", role: "user" };
}

async function run(
  target: BenchTarget,
  options: RoomListOptions,
  admin: pg.Client | undefined,
): Promise<void> {
  const seedStarted = performance.now();
  const reader = await seed(target, options);
  const seeded = (performance.now() - seedStarted) / 1000;
  const unread = options.messages - Math.floor(options.messages / 2);
  const list = () => listRooms(target.ctx, reader, { limit: 200 });
  const answer = await list();
  const wrong = answer.items.filter(
    (room) => room.unreadCount !== unread || room.mentionCount !== unread / 10,
  );
  if (answer.items.length !== options.rooms || wrong.length > 0)
    throw new Error(
      `${target.name}: ${answer.items.length} rooms listed, ${wrong.length} with wrong counts ` +
        `(first: ${JSON.stringify(wrong[0])})`,
    );
  const times: number[] = [];
  const cpuBefore = process.cpuUsage();
  const meter = admin ? await startCpuMeter({}, admin, TAG) : undefined;
  for (let i = 0; i < options.queries; i++) {
    const started = performance.now();
    await list();
    times.push(performance.now() - started);
  }
  // This process's CPU per list: on SQLite the whole query (it runs in process), on PostgreSQL the
  // client's share only. Beside the wall times, it tells what a loaded machine added.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPerList = (cpu.user + cpu.system) / 1000 / options.queries;
  // PostgreSQL's CPU for the lists: its backends serving this pool (and its background processes).
  const serverCpu = meter ? (await meter()).parts.PostgreSQL! / 1000 / options.queries : undefined;
  times.sort((a, b) => a - b);
  const p95 = percentile(times, 95);
  const total = (options.rooms + options.otherRooms) * options.messages;
  console.log(
    `${target.name.padEnd(10)} room list: a member of ${options.rooms} rooms x ` +
      `${options.messages} messages (${unread} unread and ${unread / 10} mentions each; ` +
      `${total.toLocaleString("en")} messages in all, seeded in ${seeded.toFixed(1)} s); ` +
      `${options.queries} lists p50 ${percentile(times, 50).toFixed(1)} ms, ` +
      `p95 ${p95.toFixed(1)} ms (limit ${P95_LIMIT_MS} ms)${p95 < P95_LIMIT_MS ? "" : ": OVER"}; ` +
      `CPU per list: this process ${cpuPerList.toFixed(1)} ms` +
      (serverCpu === undefined ? "" : `, PostgreSQL ${serverCpu.toFixed(1)} ms`) +
      `; load average ${os.loadavg()[0]!.toFixed(1)}`,
  );
}

export async function runRoomListBench(options: RoomListOptions): Promise<void> {
  const sqlite = await openSqliteTarget();
  try {
    await run(sqlite, options, undefined);
  } finally {
    await sqlite.cleanup();
  }
  const url = benchDatabaseUrl();
  if (!url) {
    console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
    return;
  }
  const target = await openPostgresTarget(taggedUrl(url, TAG));
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await run(target, options, admin);
  } finally {
    await admin.end();
    await target.cleanup();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: "boolean" } } });
  await runRoomListBench(roomListOptionsFrom(values));
}
