import { sql, type Kysely, type RawBuilder } from "kysely";
import { byDialect } from "../db/dialect.js";
import {
  AGE_SPAN,
  ageLexeme,
  roomLexeme,
  SEARCH_VECTOR,
} from "../db/migrations/017-message-search.js";
import type { Database } from "../db/schema.js";
import type { SearchTerm } from "./search-query.js";

/** The live rooms and DMs a user is a member of (only `roomId`, when given and one of them). */
export async function listSearchableRoomIds(
  db: Kysely<Database>,
  userId: number,
  roomId?: number,
): Promise<number[]> {
  let query = db
    .selectFrom("room_members")
    .innerJoin("rooms", "rooms.id", "room_members.room_id")
    .select("room_members.room_id")
    .where("room_members.user_id", "=", userId)
    .where("rooms.deleted_at", "is", null);
  if (roomId !== undefined) query = query.where("room_members.room_id", "=", roomId);
  return (await query.execute()).map((row) => Number(row.room_id));
}

export interface SearchFilter {
  terms: readonly SearchTerm[];
  /** The rooms to search: never empty. */
  roomIds: readonly number[];
  /** Only messages with a smaller id (the page continues). */
  beforeId?: number | undefined;
  /** Only messages this user sent. */
  senderId?: number | undefined;
  /** Only messages created before this time (epoch ms). */
  createdBefore?: number | undefined;
  /** One more than the page's size (the extra row says whether another page follows). */
  limit: number;
}

export interface SearchRow {
  id: number;
  room_id: number;
  thread_id: number | null;
  created_at: number;
  content_text: string;
}

/** The FTS5 query: the words, in the text column, in one of the rooms (see migration 017). */
export function fts5Match(terms: readonly SearchTerm[], roomIds: readonly number[]): string {
  // Terms are letters, digits and marks only (parseSearchQuery): quoted, they are never syntax.
  const words = terms.map((t) => `"${t.text}"${t.prefix ? "*" : ""}`).join(" ");
  if (roomIds.length === 0) return `"body" : (${words})`;
  return `"body" : (${words}) AND "room_id" : (${roomIds.map((id) => `"${id}"`).join(" OR ")})`;
}

/** The tsquery text for to_tsquery('simple', ...): every word, each quoted. */
export function tsqueryText(terms: readonly SearchTerm[]): string {
  return terms.map((t) => `'${t.text}'${t.prefix ? ":*" : ""}`).join(" & ");
}

/** A tsquery (its text, for ::tsquery) that matches the messages of any of the rooms. */
export function roomsTsquery(roomIds: readonly number[]): string {
  return roomIds.map((id) => `'${roomLexeme(id)}'`).join(" | ");
}

function filters(filter: SearchFilter, id: RawBuilder<unknown>): RawBuilder<unknown>[] {
  const where: RawBuilder<unknown>[] = [];
  if (filter.beforeId !== undefined) where.push(sql`${id} < ${filter.beforeId}`);
  if (filter.senderId !== undefined) where.push(sql`m."sender_user_id" = ${filter.senderId}`);
  if (filter.createdBefore !== undefined) where.push(sql`m."created_at" < ${filter.createdBefore}`);
  return where;
}

const SEARCHABLE = sql`m."deleted_at" is null and m."moderation_status" not in ('QUARANTINED', 'REJECTED')`;

/** How many of a word's newest matches SQLite reads before it lets the index intersect the rooms. */
export const CANDIDATES = 1_000;

function toSearchRow(row: SearchRow): SearchRow {
  return {
    id: Number(row.id),
    room_id: Number(row.room_id),
    thread_id: row.thread_id === null ? null : Number(row.thread_id),
    created_at: Number(row.created_at),
    content_text: row.content_text,
  };
}

const SELECTED = sql`m."id", m."room_id", m."thread_id", m."created_at", m."content_text"`;

/**
 * SQLite, in two steps, each fast where the other is slow (measured on 1,000,000 messages in
 * 1,000 rooms, a user in 50; docs/performance.md, "Search"):
 * 1. The word's newest CANDIDATES matches from the index (rowid order, no sort), then the
 *    messages among them in the user's rooms. When a page fills, or the word has no more
 *    matches, that is the answer: most searches (a word of the user's rooms) end here, in a few
 *    milliseconds, whatever the number of rooms.
 * 2. Otherwise (a word common in other rooms and rare in the user's: reading all its matches one
 *    by one took 250 ms for 50,000), the index intersects the word with the user's rooms (the
 *    room id is a column of the index) from where step 1 stopped. That costs about 10 ms plus the
 *    merge of the rooms' lists, which is why it is not the first step.
 */
async function findSearchRowsSqlite(
  db: Kysely<Database>,
  filter: SearchFilter,
): Promise<SearchRow[]> {
  const words = fts5Match(filter.terms, []);
  // Always a bound: FTS5 then seeks to it through the doclist index (without one, walking a long
  // doclist from its end took 7-18 ms for a word in 4 messages in 10, with one under 2 ms).
  const below = sql`"rowid" < ${filter.beforeId ?? Number.MAX_SAFE_INTEGER}`;
  // The word's newest matches, in the index's order: read lazily, as the join asks for them.
  const newest = sql`select "rowid" from "message_search"
    where "message_search" match ${words} and ${below}
    order by "rowid" desc limit ${CANDIDATES}`;
  const where = [SEARCHABLE, sql`m."room_id" in (${sql.join([...filter.roomIds])})`];
  where.push(...filters({ ...filter, beforeId: undefined }, sql`m."id"`));
  const found = (
    await sql<SearchRow>`select ${SELECTED} from (${newest}) c join "messages" m on m."id" = c."rowid"
      where ${sql.join(where, sql` and `)}
      order by c."rowid" desc limit ${filter.limit}`.execute(db)
  ).rows.map(toSearchRow);
  if (found.length >= filter.limit) return found;
  // The page is not full: were those all the word's matches? (The index alone answers.)
  const window = (
    await sql<{ n: number; last: number | null }>`select count(*) as "n", min("rowid") as "last"
      from (${newest})`.execute(db)
  ).rows[0]!;
  if (Number(window.n) < CANDIDATES || window.last === null) return found;
  const rest = (
    await sql<SearchRow>`select ${SELECTED}
      from "message_search" s join "messages" m on m."id" = s."rowid"
      where "message_search" match ${fts5Match(filter.terms, filter.roomIds)}
        and s."rowid" < ${Number(window.last)} and ${sql.join(where, sql` and `)}
      order by s."rowid" desc limit ${filter.limit - found.length}`.execute(db)
  ).rows.map(toSearchRow);
  return [...found, ...rest];
}

/**
 * PostgreSQL: the GIN index answers the words, the user's rooms and (first) the message ids' age
 * at once, so that only matching rows are read; GIN has no order, so what it matches is read and
 * sorted. Two steps, as a word in 4 messages in 10 of the user's rooms matched 21,000 rows of
 * 1,000,000 and reading them took 450 ms:
 * 1. The matches among the newest two age spans (AGE_SPAN ids each) below the cursor: a common
 *    word fills its page there from a few hundred rows.
 * 2. When it does not, the matches older than those spans: then the word is rare in the user's
 *    rooms (under about 51 matches in 131,072 messages), so there are few rows to read.
 * The expression and the condition of the partial index are repeated exactly, so that the planner
 * uses it.
 */
async function findSearchRowsPostgres(
  db: Kysely<Database>,
  filter: SearchFilter,
): Promise<SearchRow[]> {
  const top =
    filter.beforeId ??
    Number(
      (await sql<{ max: number | null }>`select max("id") as "max" from "messages"`.execute(db))
        .rows[0]?.max ?? 0,
    ) + 1;
  const newest = Math.floor((top - 1) / AGE_SPAN);
  const words = sql`to_tsquery('simple', ${tsqueryText(filter.terms)}) && ${roomsTsquery(filter.roomIds)}::tsquery`;
  const read = async (query: RawBuilder<unknown>, limit: number, below: number) => {
    const where = [
      sql`${sql.raw(SEARCH_VECTOR)} @@ (${query})`,
      SEARCHABLE,
      sql`m."room_id" = any(${[...filter.roomIds]}::bigint[])`,
      ...filters({ ...filter, beforeId: below }, sql`m."id"`),
    ];
    const { rows } = await sql<SearchRow>`select ${SELECTED} from "messages" m
      where ${sql.join(where, sql` and `)}
      order by m."id" desc limit ${limit}`.execute(db);
    return rows.map(toSearchRow);
  };
  const ages = [newest, newest - 1]
    .filter((age) => age >= 0)
    .map((age) => `'${ageLexeme(age * AGE_SPAN)}'`);
  const found = await read(sql`${words} && ${ages.join(" | ")}::tsquery`, filter.limit, top);
  const olderThan = Math.max(0, newest - 1) * AGE_SPAN;
  if (found.length >= filter.limit || olderThan === 0) return found;
  return [...found, ...(await read(words, filter.limit - found.length, olderThan))];
}

/**
 * The searchable messages of `roomIds` with every word, newest (highest id) first: two texts on
 * purpose, one per index (migration 017), each beside its reasons. Both check again that the
 * message is searchable (not deleted, not hidden), which the index already ensures.
 */
export async function findSearchRows(
  db: Kysely<Database>,
  filter: SearchFilter,
): Promise<SearchRow[]> {
  return byDialect(db, { sqlite: findSearchRowsSqlite, postgres: findSearchRowsPostgres })(
    db,
    filter,
  );
}
