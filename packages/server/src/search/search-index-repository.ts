import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.js";

/**
 * SQLite's search index after the commit (migration 025): adds to `message_search` the messages
 * after `message_search_progress.indexed_through`, at most `batch` of them (the searchable ones:
 * not deleted, not held or rejected), and moves the mark to the last one taken. Run it in a unit
 * of work: the index and the mark commit together. Answers whether messages remain.
 */
export async function indexSearchBatch(db: Kysely<Database>, batch: number): Promise<boolean> {
  const { rows } = await sql<{ through: number; upto: number | null; n: number }>`
    select p."indexed_through" as "through", max(m."id") as "upto", count(m."id") as "n"
    from "message_search_progress" p
    left join (select "id" from "messages"
      where "id" > (select "indexed_through" from "message_search_progress")
      order by "id" limit ${batch}) m on 1`.execute(db);
  const { through, upto, n } = rows[0]!;
  if (upto === null) return false;
  await sql`insert into "message_search" ("rowid", "body", "room_id")
    select "id", "content_text", "room_id" from "messages"
    where "id" > ${through} and "id" <= ${upto}
      and "deleted_at" is null and "moderation_status" not in ('QUARANTINED', 'REJECTED')`.execute(
    db,
  );
  await sql`update "message_search_progress" set "indexed_through" = ${upto}`.execute(db);
  return Number(n) >= batch;
}

/** SQLite: whether messages were committed that the index has not taken yet. */
export async function isSearchIndexBehind(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ behind: number }>`
    select coalesce((select max("id") from "messages"), 0)
      > (select "indexed_through" from "message_search_progress") as "behind"`.execute(db);
  return Boolean(rows[0]?.behind);
}
