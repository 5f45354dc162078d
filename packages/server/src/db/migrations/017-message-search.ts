import { sql, type Kysely, type Migration } from "kysely";
import { renderWithoutCache } from "../../chat/rendering/render-message.js";
import { dialectOf } from "../dialect.js";

/**
 * Search (docs/chat-api.md, "Search"):
 * - `messages.content_text`: the plain text a reader sees (the API's contentText: markdown and
 *   markup gone, entities decoded), written with the content by posts and edits, emptied by a
 *   delete. Search indexes it rather than the stored markdown or HTML, so `**deploy**` is found as
 *   "deploy", a tag's name is not a word, and snippets need no rendering.
 * - A message is in the index only while it is searchable: not deleted, not quarantined or
 *   rejected (SEARCHABLE below). Both databases keep the index in the same transaction as the
 *   write, whatever the path (a post, a batch of posts, an edit, a delete, a moderation decision).
 * - SQLite: `message_search`, a contentless FTS5 table (the text is in `messages`, not copied
 *   again) whose rowid is the message id, with two columns: `body` (content_text) and `room_id`
 *   (the room's id as a token, so that the index can intersect a word with the rooms a user may
 *   read: search-repository.ts says when it does). Triggers on `messages` keep it. Contentless, a
 *   row is removed with the 'delete' command and the values it was indexed with, which the
 *   triggers have (`old.`); `secure-delete` removes the deleted words from the index's pages at
 *   once (FTS5 otherwise leaves them until segments merge), so with the connection's
 *   `secure_delete` pragma no copy of a deleted message's words is left in the file. Not
 *   `contentless_delete=1`: it only marks rows as deleted (tombstones), leaving their words in the
 *   index. The unicode61 tokenizer without diacritics removal: "cafe" does not find "café", as on
 *   PostgreSQL.
 * - PostgreSQL: a partial GIN index on SEARCH_VECTOR, `to_tsvector('simple', ...)` of the text with
 *   the punctuation that makes the parser keep e-mail addresses, host names, URLs, paths and
 *   versions as one token turned into spaces, so "example" finds "example.com" as on SQLite;
 *   'simple' (lowercased words, no stemming, no stop words): the same words match on both
 *   databases, whatever the language of the team. Plus one lexeme for the message's room,
 *   `room <id>` (with a space, which no text's lexeme has), so that the index itself intersects
 *   the words with the user's rooms: a word common in other rooms costs no row reads. And one for
 *   its age, `age <id / 65536>`, so that a search can ask for the newest messages first and read
 *   only those rows (GIN has no order). An expression index, not a stored column: no second copy
 *   of the text's words in every row.
 * - The migration fills content_text (rendering each message) and the index for existing
 *   messages.
 */
/** Message ids per age lexeme (PostgreSQL): see search-repository.ts. */
export const AGE_SPAN = 65_536;
const SEPARATORS = ".@/:-_+#&;<>=?~%\\";
export const SEARCH_VECTOR = `(to_tsvector('simple'::regconfig, translate("content_text", '${SEPARATORS}', '${" ".repeat(SEPARATORS.length)}')) || array_to_tsvector(array['room ' || "room_id"::text, 'age ' || ("id" / ${AGE_SPAN})::text]))`;

/** The lexeme of a message's room in SEARCH_VECTOR: no text gives it (it holds a space). */
export function roomLexeme(roomId: number): string {
  return `room ${roomId}`;
}

/** The lexeme of a message's age in SEARCH_VECTOR: its id's span of AGE_SPAN ids. */
export function ageLexeme(id: number): string {
  return `age ${Math.floor(id / AGE_SPAN)}`;
}

/** Which messages the index holds, as a condition on a `messages` row (`row`: new, old or none). */
function searchable(row = ""): string {
  const at = row === "" ? "" : `${row}.`;
  return `${at}"deleted_at" is null and ${at}"moderation_status" not in ('QUARANTINED', 'REJECTED')`;
}

const BACKFILL_BATCH = 500;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function backfillContentText(db: Kysely<any>): Promise<void> {
  let after = 0;
  for (;;) {
    const rows: Array<{ id: number; content: string; content_format: "markdown" | "html" }> =
      await db
        .selectFrom("messages")
        .select(["id", "content", "content_format"])
        .where("id", ">", after)
        .where("deleted_at", "is", null)
        .orderBy("id")
        .limit(BACKFILL_BATCH)
        .execute();
    if (rows.length === 0) return;
    for (const row of rows) {
      let text = "";
      try {
        text = renderWithoutCache(row.content, row.content_format).text;
      } catch {
        // Stored content that cannot be rendered any more is left out of search.
      }
      await db
        .updateTable("messages")
        .set({ content_text: text })
        .where("id", "=", row.id)
        .execute();
    }
    after = Number(rows[rows.length - 1]!.id);
  }
}

export const messageSearch: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("messages")
      .addColumn("content_text", "text", (c) => c.notNull().defaultTo(""))
      .execute();
    await backfillContentText(db);
    if (dialectOf(db) === "postgres") {
      await sql
        .raw(
          `create index "messages_search" on "messages" using gin (${SEARCH_VECTOR}) where ${searchable()}`,
        )
        .execute(db);
      return;
    }
    await sql`create virtual table "message_search" using fts5(
      "body", "room_id", content = '', tokenize = 'unicode61 remove_diacritics 0')`.execute(db);
    await sql`insert into "message_search" ("message_search", "rank") values ('secure-delete', 1)`.execute(
      db,
    );
    await sql
      .raw(
        `insert into "message_search" ("rowid", "body", "room_id")
         select "id", "content_text", "room_id" from "messages" where ${searchable()}`,
      )
      .execute(db);
    const add = (row: string) =>
      `insert into "message_search" ("rowid", "body", "room_id")
         select ${row}."id", ${row}."content_text", ${row}."room_id" where ${searchable(row)};`;
    const remove = (row: string) =>
      `insert into "message_search" ("message_search", "rowid", "body", "room_id")
         select 'delete', ${row}."id", ${row}."content_text", ${row}."room_id" where ${searchable(row)};`;
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
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    if (dialectOf(db) === "postgres") {
      await db.schema.dropIndex("messages_search").execute();
    } else {
      for (const trigger of [
        "message_search_insert",
        "message_search_update",
        "message_search_delete",
      ])
        await sql.raw(`drop trigger "${trigger}"`).execute(db);
      await sql`drop table "message_search"`.execute(db);
    }
    await db.schema.alterTable("messages").dropColumn("content_text").execute();
  },
};
