// Search on each database (SQLite always; PostgreSQL too when PARLEY_TEST_DATABASE_URL is set),
// through the service the route calls (searchMessages: the member's rooms, the index, the
// snippets; no HTTP):
//
// - `rooms` rooms (1,000) holding `messages` messages (1,000,000; 100,000 with --quick) between
//   them, seeded with bulk SQL (one INSERT ... SELECT; on SQLite then indexed by the search indexer
//   in its batches, as after posts; on PostgreSQL the search index is dropped for the load and
//   built again after it, as a restore would). Each message's text is 8 words drawn from 20,000 ("w1" to "w19999") with a
//   frequency falling as 1/rank (Zipf-like): "w1" is in about 4 messages in 10, "w100" in about
//   8 in 1,000, "w10000" in about 8 in 100,000. One message in 10 of the rooms the user is not in
//   also has "elsewhere": a word common in the server that none of the user's rooms has.
// - The searching user is a member of 50 of the rooms (every 20th). Queries, `queries` of each
//   kind: a very common word, a common one, a rare one, a word in no message, a word only in other
//   rooms, two words, a prefix (`w123*`: w123, w1230..w1239, w12300..w12399), each the first page of 50
//   (newest first) and, for the common word, the page after it through its cursor.
// - p95 over all of them must stay under 100 ms (issue 24).
//
// Run: npx tsx packages/server/bench/search.bench.ts [--quick]
// (also part of `npm run bench -w @parley/server` as `search`, through bench/run-all.ts)
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import type { Principal } from "../src/auth/principal.js";
import { searchMessages } from "../src/search/search-service.js";
import { openTargets, percentile, type BenchTarget } from "./bench-targets.js";

export interface SearchBenchOptions {
  messages: number;
  rooms: number;
  /** Timed queries of each kind. */
  queries: number;
}

const MEMBER_EVERY = 20;
const WORDS_PER_MESSAGE = 8;
const VOCABULARY = 20_000;
const P95_LIMIT_MS = 100;

export function searchOptionsFrom(flags: { quick?: boolean }): SearchBenchOptions {
  return flags.quick
    ? { messages: 100_000, rooms: 1_000, queries: 20 }
    : { messages: 1_000_000, rooms: 1_000, queries: 60 };
}

/**
 * The text of message `n` as SQL: 8 words, word k's rank floor(20000^u) for a u in [0, 1) hashed
 * from (n, k) (a Lehmer step over a linear mix), so rank r has a probability of about
 * ln(1 + 1/r) / ln(20000).
 */
function textExpression(dialect: "sqlite" | "postgres"): string {
  const int = dialect === "postgres" ? "bigint" : "integer";
  const words = Array.from({ length: WORDS_PER_MESSAGE }, (_, k) => {
    const u = `(((n * 1103515245 + ${k * 12345 + 7}) % 2147483647) * 48271 % 2147483647) / cast(2147483647 as double precision)`;
    return `'w' || cast(floor(exp(${u} * ${Math.log(VOCABULARY)})) as ${int})`;
  });
  return words.join(` || ' ' || `);
}

export async function seed(
  target: BenchTarget,
  options: SearchBenchOptions,
): Promise<{ reader: Principal; memberRooms: number }> {
  const { ctx } = target;
  const now = Date.now();
  const user = (username: string) =>
    ctx.db
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
  const poster = await user("search-poster");
  const reader = await user("search-reader");
  const dialect = target.name === "PostgreSQL" ? "postgres" : "sqlite";
  const series = (count: number) =>
    dialect === "postgres"
      ? sql.raw(`generate_series(1, ${count}::bigint) as seq(n)`)
      : sql.raw(
          `(with recursive s(n) as (select 1 union all select n + 1 from s where n < ${count}) select n from s) as seq`,
        );
  await sql`insert into "rooms" ("name", "kind", "created_by", "deleted_at", "created_at")
    select 'search-' || n, 'room', ${poster.id}, null, ${now} from ${series(options.rooms)}`.execute(
    ctx.db,
  );
  const rooms = await ctx.db
    .selectFrom("rooms")
    .select("id")
    .where("name", "like", "search-%")
    .orderBy("id")
    .execute();
  const firstRoom = Number(rooms[0]!.id);
  const memberRooms = rooms.filter((_, i) => i % MEMBER_EVERY === 0);
  await ctx.db
    .insertInto("room_members")
    .values(memberRooms.map((room) => ({ room_id: room.id, user_id: reader.id, joined_at: now })))
    .execute();

  let indexDefinition: string | undefined;
  if (dialect === "postgres") {
    const { rows } = await sql<{
      definition: string;
    }>`select pg_get_indexdef('messages_search'::regclass) as "definition"`.execute(ctx.db);
    indexDefinition = rows[0]!.definition;
    await sql`drop index "messages_search"`.execute(ctx.db);
  }
  const base = now - options.messages - 60_000;
  await sql`insert into "messages" ("room_id", "sender_user_id", "inbound_webhook_id",
      "sender_display_name", "sender_avatar_url", "content", "content_format", "moderation_status",
      "created_at", "updated_at", "content_text")
    select ${firstRoom} + n % ${options.rooms}, ${poster.id}, null, 'search-poster', null,
      'seeded', 'markdown', 'none', ${base} + n, ${base} + n,
      ${sql.raw(textExpression(dialect))} ||
        case when n % 10 = 0 and n % ${options.rooms} % ${MEMBER_EVERY} <> 0 then ' elsewhere' else '' end
    from ${series(options.messages)}`.execute(ctx.db);
  if (indexDefinition) await sql.raw(indexDefinition).execute(ctx.db);
  // SQLite: the indexer takes the messages in batches, as after posts (migration 025).
  await ctx.searchIndexer.catchUp();
  if (dialect === "postgres") await sql`analyze`.execute(ctx.db);
  else await sql`analyze`.execute(ctx.db);
  return {
    reader: { userId: Number(reader.id), username: "search-reader", role: "user" },
    memberRooms: memberRooms.length,
  };
}

const KINDS: Array<[kind: string, q: string]> = [
  ["very common (w1)", "w1"],
  ["common (w20)", "w20"],
  ["rare (w10000)", "w10000"],
  ["in no message", "nowhere"],
  ["only in others' rooms", "elsewhere"],
  ["two words (w3 w50)", "w3 w50"],
  ["prefix (w123*)", "w123*"],
];

/** Runs the searches; answers what went over the limit, if anything. */
export async function searchRun(
  target: BenchTarget,
  options: SearchBenchOptions,
): Promise<string | undefined> {
  const seedStarted = performance.now();
  const { reader, memberRooms } = await seed(target, options);
  const seeded = (performance.now() - seedStarted) / 1000;
  const all: number[] = [];
  const lines: string[] = [];
  const time = async (run: () => Promise<unknown>) => {
    const started = performance.now();
    await run();
    const ms = performance.now() - started;
    all.push(ms);
    return ms;
  };
  const kinds: Array<[string, () => Promise<unknown>, () => Promise<number>]> = KINDS.map(
    ([kind, q]) => [
      kind,
      () => searchMessages(target.ctx, reader, { q, limit: 50 }),
      async () => (await searchMessages(target.ctx, reader, { q, limit: 200 })).items.length,
    ],
  );
  const firstPage = await searchMessages(target.ctx, reader, { q: "w1", limit: 50 });
  const cursorId = firstPage.items.at(-1)?.messageId;
  kinds.push([
    "very common (w1), page 2",
    () => searchMessages(target.ctx, reader, { q: "w1", limit: 50, cursorId }),
    async () => firstPage.items.length,
  ]);
  // Warm-up: one of each.
  for (const [, run] of kinds) await run();
  for (const [kind, run, count] of kinds) {
    const times: number[] = [];
    for (let i = 0; i < options.queries; i++) times.push(await time(run));
    times.sort((a, b) => a - b);
    lines.push(
      `  ${kind.padEnd(26)} hits in a first page of 200: ${String(await count()).padStart(3)}; ` +
        `p50 ${percentile(times, 50).toFixed(2)} ms, p95 ${percentile(times, 95).toFixed(2)} ms`,
    );
  }
  all.sort((a, b) => a - b);
  const p95 = percentile(all, 95);
  console.log(
    `${target.name.padEnd(10)} search: ${options.messages.toLocaleString("en")} messages in ` +
      `${options.rooms.toLocaleString("en")} rooms (seeded in ${seeded.toFixed(1)} s), a user in ` +
      `${memberRooms} of them; ${all.length} queries p50 ${percentile(all, 50).toFixed(2)} ms, ` +
      `p95 ${p95.toFixed(2)} ms, max ${all.at(-1)!.toFixed(2)} ms (limit ${P95_LIMIT_MS} ms)` +
      `${p95 < P95_LIMIT_MS ? "" : ": OVER"}`,
  );
  for (const line of lines) console.log(line);
  if (firstPage.items.length !== 50) throw new Error(`${target.name}: the first page is not full`);
  return p95 < P95_LIMIT_MS ? undefined : `${target.name}: search p95 ${p95.toFixed(2)} ms`;
}

export async function runSearchBench(options: SearchBenchOptions): Promise<void> {
  const over: string[] = [];
  // Both databases run before an over-the-limit figure fails the benchmark.
  for (const open of await openTargets()) {
    const target = await open();
    try {
      const failed = await searchRun(target, options);
      if (failed) over.push(failed);
    } finally {
      await target.cleanup();
    }
  }
  if (over.length > 0) throw new Error(over.join("; "));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: "boolean" } } });
  await runSearchBench(searchOptionsFrom(values));
}
