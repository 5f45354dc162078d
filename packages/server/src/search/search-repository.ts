import { sql, type Kysely, type RawBuilder } from "kysely";
import { byDialect } from "../db/dialect.js";
import { roomLexeme } from "../db/migrations/017-message-search.js";
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

/** How many of the newest message ids PostgreSQL walks first, in id order, before the index. */
export const WALKED_IDS = 10_000;
/** The most ids a second walk reads, when the first found the word but too few times. */
export const WALKED_IDS_MAX = 100_000;

/**
 * PostgreSQL, in steps (measured on 1,000,000 messages in 1,000 rooms, a user in 50;
 * docs/performance.md, "Search"):
 * 1. The newest WALKED_IDS messages below the cursor, read newest first through the primary key:
 *    those of the user's rooms are tested against the words on their stored `search_vector`
 *    (migration 025), and the walk stops once the page is full. A word common in the user's rooms
 *    fills its page there from a few hundred rows, in a few milliseconds. `ts_match_vq` is the
 *    function behind `@@`: written as a call, the condition cannot be answered from the GIN
 *    index, so the planner keeps this plan (read in order, stop early) instead of matching every
 *    row of the word and sorting them.
 * 2. When the walk found some matches but not a page, and those matches say the rest of the page
 *    lies within WALKED_IDS_MAX more ids (with a margin), a second walk over them. A rarer word
 *    goes to step 3 at once: a walk that does not fill the page costs its rows for little.
 * 3. What is still missing, from the GIN index, which answers the words and the user's rooms at
 *    once (each message also holds the lexeme `room <id>`), below what was walked; what it
 *    matches is read and sorted (GIN has no order). A rare word is cheap there (its own list
 *    drives the scan); a word more common than a room's messages and rare in the user's rooms
 *    (the worst case) is driven by the rooms' lists: 50,000 entries for 50 rooms of 1,000.
 *    The rooms are checked again on the rows it found (outside the materialized query, so the
 *    planner cannot make a second index scan of it).
 * The condition of the partial index is repeated exactly, so that the planner uses it.
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
  const words = sql`to_tsquery('simple', ${tsqueryText(filter.terms)})`;
  const rooms = sql`m."room_id" = any(${[...filter.roomIds]}::bigint[])`;
  const found: SearchRow[] = [];
  const walk = async (from: number, below: number) => {
    const where = [
      sql`m."id" >= ${from}`,
      rooms,
      SEARCHABLE,
      sql`ts_match_vq(m."search_vector", ${words})`,
      ...filters({ ...filter, beforeId: below }, sql`m."id"`),
    ];
    const { rows } = await sql<SearchRow>`select ${SELECTED} from "messages" m
      where ${sql.join(where, sql` and `)}
      order by m."id" desc limit ${filter.limit - found.length}`.execute(db);
    found.push(...rows.map(toSearchRow));
  };
  let walkedFrom = Math.max(0, top - WALKED_IDS);
  await walk(walkedFrom, top);
  if (found.length >= filter.limit || walkedFrom === 0) return found;
  // Ids the rest of the page should take at the rate the walk found, with a margin.
  const needed = ((filter.limit - found.length) / found.length) * (top - walkedFrom) * 1.5;
  if (found.length > 0 && needed <= WALKED_IDS_MAX) {
    const below = walkedFrom;
    walkedFrom = Math.max(0, below - Math.ceil(needed));
    await walk(walkedFrom, below);
    if (found.length >= filter.limit || walkedFrom === 0) return found;
  }
  const where = [
    sql`m."search_vector" @@ (${words} && ${roomsTsquery(filter.roomIds)}::tsquery)`,
    SEARCHABLE,
    ...filters({ ...filter, beforeId: walkedFrom }, sql`m."id"`),
  ];
  // Materialized: every row the index matches, read by a bitmap scan, then sorted; never a walk
  // of the primary key that expects the matches to come early.
  const { rows } = await sql<SearchRow>`with "hits" as materialized (
      select ${SELECTED} from "messages" m where ${sql.join(where, sql` and `)})
    select * from "hits" m where ${rooms}
    order by m."id" desc limit ${filter.limit - found.length}`.execute(db);
  return [...found, ...rows.map(toSearchRow)];
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
