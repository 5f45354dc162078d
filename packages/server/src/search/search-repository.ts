import { sql, type Kysely, type RawBuilder } from "kysely";
import { byDialect } from "../db/dialect.js";
import { SEARCH_VECTOR } from "../db/migrations/017-message-search.js";
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
  return `"body" : (${words}) AND "room_id" : (${roomIds.map((id) => `"${id}"`).join(" OR ")})`;
}

/** The tsquery text for to_tsquery('simple', ...): every word, each quoted. */
export function tsqueryText(terms: readonly SearchTerm[]): string {
  return terms.map((t) => `'${t.text}'${t.prefix ? ":*" : ""}`).join(" & ");
}

function filters(filter: SearchFilter, id: RawBuilder<unknown>): RawBuilder<unknown>[] {
  const where: RawBuilder<unknown>[] = [];
  if (filter.beforeId !== undefined) where.push(sql`${id} < ${filter.beforeId}`);
  if (filter.senderId !== undefined) where.push(sql`m."sender_user_id" = ${filter.senderId}`);
  if (filter.createdBefore !== undefined) where.push(sql`m."created_at" < ${filter.createdBefore}`);
  return where;
}

const SEARCHABLE = sql`m."deleted_at" is null and m."moderation_status" not in ('QUARANTINED', 'REJECTED')`;

/**
 * The searchable messages of `roomIds` with every word, newest (highest id) first. Two texts on
 * purpose, one per index (migration 017):
 * - SQLite walks the FTS5 index from the highest rowid down, the rooms part of the match, and
 *   stops at `limit`: the cost follows the matches in the user's rooms, not in the whole server.
 * - PostgreSQL reads the GIN index for the words (the expression and the condition of the
 *   partial index, repeated exactly so that the planner uses it), keeps the rows of the rooms and
 *   sorts them by id.
 * Both check again that the message is searchable (not deleted, not hidden), which the index
 * already ensures.
 */
export async function findSearchRows(
  db: Kysely<Database>,
  filter: SearchFilter,
): Promise<SearchRow[]> {
  const query = byDialect(db, {
    sqlite: () => {
      const where = [
        sql`"message_search" match ${fts5Match(filter.terms, filter.roomIds)}`,
        SEARCHABLE,
        ...filters(filter, sql`s."rowid"`),
      ];
      return sql<SearchRow>`select m."id", m."room_id", m."thread_id", m."created_at", m."content_text"
        from "message_search" s join "messages" m on m."id" = s."rowid"
        where ${sql.join(where, sql` and `)}
        order by s."rowid" desc limit ${filter.limit}`;
    },
    postgres: () => {
      const where = [
        sql`${sql.raw(SEARCH_VECTOR)} @@ to_tsquery('simple', ${tsqueryText(filter.terms)})`,
        SEARCHABLE,
        sql`m."room_id" = any(${[...filter.roomIds]}::bigint[])`,
        ...filters(filter, sql`m."id"`),
      ];
      return sql<SearchRow>`select m."id", m."room_id", m."thread_id", m."created_at", m."content_text"
        from "messages" m
        where ${sql.join(where, sql` and `)}
        order by m."id" desc limit ${filter.limit}`;
    },
  })();
  const { rows } = await query.execute(db);
  return rows.map((row) => ({
    id: Number(row.id),
    room_id: Number(row.room_id),
    thread_id: row.thread_id === null ? null : Number(row.thread_id),
    created_at: Number(row.created_at),
    content_text: row.content_text,
  }));
}
