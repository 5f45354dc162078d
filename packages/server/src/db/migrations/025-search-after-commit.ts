import { sql, type Kysely, type Migration } from "kysely";
import { dialectOf } from "../dialect.js";
import { SEARCH_VECTOR } from "./017-message-search.js";

const SEPARATORS = ".@/:-_+#&;<>=?~%\\";
/**
 * PostgreSQL's stored search vector: migration 017's words (the same parser, separators and
 * 'simple' configuration) and its room lexeme, `room <id>`; no more age lexeme (searches read the
 * newest messages in id order instead).
 */
const SEARCH_VECTOR_COLUMN = `to_tsvector('simple'::regconfig, translate("content_text", '${SEPARATORS}', '${" ".repeat(SEPARATORS.length)}')) || array_to_tsvector(array['room ' || "room_id"::text])`;

/**
 * Search that costs posting less, and answers faster (docs/performance.md, "Search"):
 * - SQLite: a post no longer writes the FTS5 index in its own transaction. Migration 017's insert
 *   trigger is dropped; the search indexer (search/search-indexer.ts) adds the messages committed
 *   since it last ran, a batch per transaction. `message_search_progress.indexed_through` is the
 *   highest message id it has taken: the index holds exactly the searchable messages up to it
 *   (ids follow commit order on SQLite's one writer). The update and delete triggers still keep
 *   the index in the transaction of an edit, a delete or a moderation decision, but only for
 *   messages up to that id; the indexer takes a later message as it is when it gets there. (A
 *   contentless FTS5 table must never be told to delete a row it does not hold: that would
 *   corrupt it, hence the bound in both triggers.)
 * - PostgreSQL: the search vector of migration 017 becomes a stored generated column,
 *   `search_vector`, and the GIN index is on it (without 017's age lexeme, which no search reads any
 *   more). Computed once per write as before (the index
 *   used to compute it), kept in the row so that a search can test it on the rows it reads in id
 *   order without computing it again (search-repository.ts says when it does).
 */
export const searchAfterCommit: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    if (dialectOf(db) === "postgres") {
      await sql
        .raw(
          `alter table "messages" add column "search_vector" tsvector generated always as (${SEARCH_VECTOR_COLUMN}) stored`,
        )
        .execute(db);
      await db.schema.dropIndex("messages_search").execute();
      await sql
        .raw(
          `create index "messages_search" on "messages" using gin ("search_vector") where ${searchable()}`,
        )
        .execute(db);
      // Statistics of the new column's lexemes, for the planner's estimates of a search.
      await sql`analyze "messages"`.execute(db);
      return;
    }
    await sql`create table "message_search_progress" (
      "id" integer primary key check ("id" = 1),
      "indexed_through" integer not null)`.execute(db);
    await sql`insert into "message_search_progress" ("id", "indexed_through")
      select 1, coalesce(max("id"), 0) from "messages"`.execute(db);
    await dropTriggers(db);
    const through = `(select "indexed_through" from "message_search_progress")`;
    await createTriggers(db, (row) => `${row}."id" <= ${through}`);
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    if (dialectOf(db) === "postgres") {
      await db.schema.dropIndex("messages_search").execute();
      await db.schema.alterTable("messages").dropColumn("search_vector").execute();
      await sql
        .raw(
          `create index "messages_search" on "messages" using gin (${SEARCH_VECTOR}) where ${searchable()}`,
        )
        .execute(db);
      return;
    }
    await dropTriggers(db);
    // What the indexer had not taken yet, then migration 017's triggers again.
    await sql
      .raw(
        `insert into "message_search" ("rowid", "body", "room_id")
         select "id", "content_text", "room_id" from "messages"
         where "id" > (select "indexed_through" from "message_search_progress") and ${searchable()}`,
      )
      .execute(db);
    await sql`drop table "message_search_progress"`.execute(db);
    await createTriggers(db, () => "1", true);
  },
};

/** Migration 017's condition: which messages the index holds (`row`: new, old or none). */
function searchable(row = ""): string {
  const at = row === "" ? "" : `${row}.`;
  return `${at}"deleted_at" is null and ${at}"moderation_status" not in ('QUARANTINED', 'REJECTED')`;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function dropTriggers(db: Kysely<any>): Promise<void> {
  for (const trigger of ["message_search_insert", "message_search_update", "message_search_delete"])
    await sql.raw(`drop trigger if exists "${trigger}"`).execute(db);
}

/** Migration 017's triggers, limited to the rows `held` says the index holds. */
async function createTriggers(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>,
  held: (row: string) => string,
  onInsert = false,
): Promise<void> {
  const add = (row: string) =>
    `insert into "message_search" ("rowid", "body", "room_id")
       select ${row}."id", ${row}."content_text", ${row}."room_id"
       where ${searchable(row)} and ${held(row)};`;
  const remove = (row: string) =>
    `insert into "message_search" ("message_search", "rowid", "body", "room_id")
       select 'delete', ${row}."id", ${row}."content_text", ${row}."room_id"
       where ${searchable(row)} and ${held(row)};`;
  if (onInsert)
    await sql
      .raw(
        `create trigger "message_search_insert" after insert on "messages" begin ${add("new")} end`,
      )
      .execute(db);
  await sql
    .raw(
      `create trigger "message_search_update"
       after update of "content_text", "moderation_status", "deleted_at" on "messages"
       when old."content_text" is not new."content_text"
         or old."moderation_status" is not new."moderation_status"
         or old."deleted_at" is not new."deleted_at"
       begin ${remove("old")} ${add("new")} end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger "message_search_delete" after delete on "messages" begin ${remove("old")} end`,
    )
    .execute(db);
}
