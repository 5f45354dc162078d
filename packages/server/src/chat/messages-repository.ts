import type { ExpressionBuilder, Kysely, Selectable } from "kysely";
import { compiledOnce } from "../db/compiled-query.js";
import { withRowLock } from "../db/dialect.js";
import type { Database, MessageRevisionsTable, MessagesTable } from "../db/schema.js";

/**
 * Queries on `messages` and `message_revisions`, and the statements of the post path. A message's
 * row is never deleted (its id must not come back, its thread keeps its shape): a rejected one is
 * hidden by its `moderation_status`, a deleted one is a tombstone whose content is emptied and
 * whose revisions are deleted. Every function takes the database or a transaction.
 */
export type ModerationStatusColumn = MessagesTable["moderation_status"];

/**
 * What a list leaves out: messages of the `statuses` (none for an admin), except the messages
 * held for review (QUARANTINED) whose sender is `heldVisibleTo`: their author keeps seeing them.
 */
export interface HiddenFilter {
  statuses: readonly ModerationStatusColumn[];
  heldVisibleTo?: number | undefined;
}

/** The `where` of a HiddenFilter, or undefined when it leaves nothing out. */
function visibleTo(filter: HiddenFilter) {
  const { statuses, heldVisibleTo } = filter;
  if (statuses.length === 0) return undefined;
  return (eb: ExpressionBuilder<Database, "messages">) =>
    heldVisibleTo === undefined
      ? eb("messages.moderation_status", "not in", statuses)
      : eb.or([
          eb("messages.moderation_status", "not in", statuses),
          eb.and([
            eb("messages.moderation_status", "=", "QUARANTINED"),
            eb("messages.sender_user_id", "=", heldVisibleTo),
          ]),
        ]);
}

function selectMessageViewRows(db: Kysely<Database>) {
  return db
    .selectFrom("messages")
    .leftJoin("users", "users.id", "messages.sender_user_id")
    .select([
      "messages.id",
      "messages.room_id",
      "messages.content",
      "messages.content_format",
      "messages.sender_user_id",
      "messages.inbound_webhook_id",
      "messages.sender_display_name",
      "messages.sender_avatar_url",
      "messages.moderation_status",
      "messages.created_at",
      "messages.thread_id",
      "messages.reply_count",
      "messages.last_reply_at",
      "messages.revision",
      "messages.edited_at",
      "messages.updated_at",
      "messages.deleted_at",
      "users.username",
    ]);
}

/** A message with its sender's username (null for an integration). */
export type MessageViewRow = Awaited<
  ReturnType<ReturnType<typeof selectMessageViewRows>["executeTakeFirstOrThrow"]>
>;

/** A message the caller knows exists (it just wrote it). */
export async function readMessageViewRow(
  db: Kysely<Database>,
  messageId: number,
): Promise<MessageViewRow> {
  return selectMessageViewRows(db).where("messages.id", "=", messageId).executeTakeFirstOrThrow();
}

/** The message, if it belongs to that room. */
export async function findRoomMessageViewRow(
  db: Kysely<Database>,
  roomId: number,
  messageId: number,
): Promise<MessageViewRow | undefined> {
  return selectMessageViewRows(db)
    .where("messages.id", "=", messageId)
    .where("messages.room_id", "=", roomId)
    .executeTakeFirst();
}

/**
 * A room's top-level messages newest first, ids below `cursorId`; or, with `threadId`, that
 * thread's replies oldest first, ids above `cursorId`. Tombstones included, the `hidden` ones
 * left out; `limit + 1` rows (the extra one tells whether another page exists).
 */
export async function listRoomMessageViewRows(
  db: Kysely<Database>,
  roomId: number,
  page: {
    cursorId: number | undefined;
    threadId?: number | undefined;
    limit: number;
    hidden: HiddenFilter;
  },
): Promise<MessageViewRow[]> {
  let select = selectMessageViewRows(db)
    .where("messages.room_id", "=", roomId)
    .limit(page.limit + 1);
  if (page.threadId === undefined) {
    select = select.where("messages.thread_id", "is", null).orderBy("messages.id", "desc");
    if (page.cursorId !== undefined) select = select.where("messages.id", "<", page.cursorId);
  } else {
    select = select.where("messages.thread_id", "=", page.threadId).orderBy("messages.id", "asc");
    if (page.cursorId !== undefined) select = select.where("messages.id", ">", page.cursorId);
  }
  const visible = visibleTo(page.hidden);
  if (visible) select = select.where(visible);
  return select.execute();
}

/** Where a list of changes continues: after this change (its time, then its id). */
export interface ChangeCursor {
  updatedAt: number;
  id: number;
}

/**
 * A room's messages of both levels (tombstones included, the `hidden` ones left out) changed
 * after `since`, oldest change first, continuing after `after`: read along the index
 * messages_room_updated (room_id, updated_at, id), never the whole room; with `threadId`, only
 * that thread's replies. `limit + 1` rows.
 */
export async function listRoomMessageViewRowsChangedSince(
  db: Kysely<Database>,
  roomId: number,
  page: {
    since: number;
    after: ChangeCursor | undefined;
    threadId?: number | undefined;
    limit: number;
    hidden: HiddenFilter;
  },
): Promise<MessageViewRow[]> {
  let select = selectMessageViewRows(db)
    .where("messages.room_id", "=", roomId)
    .where("messages.updated_at", ">", page.since)
    .orderBy("messages.updated_at", "asc")
    .orderBy("messages.id", "asc")
    .limit(page.limit + 1);
  if (page.threadId !== undefined) select = select.where("messages.thread_id", "=", page.threadId);
  const after = page.after;
  if (after !== undefined)
    select = select.where((eb) =>
      eb(
        eb.refTuple("messages.updated_at", "messages.id"),
        ">",
        eb.tuple(after.updatedAt, after.id),
      ),
    );
  const visible = visibleTo(page.hidden);
  if (visible) select = select.where(visible);
  return select.execute();
}

/**
 * A room's messages in id order, leaving out the deleted and the `hiddenStatuses`: those with an id above
 * `afterId` (at most `limit`), or those among `ids`. The live stream's resume reads these.
 */
export async function listRoomMessageViewRowsAfter(
  db: Kysely<Database>,
  roomId: number,
  page: {
    afterId?: number;
    ids?: readonly number[];
    limit?: number;
    hiddenStatuses: readonly ModerationStatusColumn[];
  },
): Promise<MessageViewRow[]> {
  let select = selectMessageViewRows(db)
    .where("messages.room_id", "=", roomId)
    .where("messages.deleted_at", "is", null)
    .orderBy("messages.id", "asc");
  if (page.hiddenStatuses.length > 0)
    select = select.where("messages.moderation_status", "not in", page.hiddenStatuses);
  if (page.afterId !== undefined) select = select.where("messages.id", ">", page.afterId);
  if (page.ids !== undefined) select = select.where("messages.id", "in", page.ids);
  if (page.limit !== undefined) select = select.limit(page.limit);
  return select.execute();
}

/**
 * The messages next to `message` in its conversation (the room's top level, or its thread), every
 * moderation status and tombstones included: up to `limit` before it (newest first) or after it
 * (oldest first). Served by the room's (room_id, id) and thread indexes.
 */
export async function listNeighbourMessageViewRows(
  db: Kysely<Database>,
  message: { id: number; roomId: number; threadId: number | null },
  side: "before" | "after",
  limit: number,
): Promise<MessageViewRow[]> {
  let select = selectMessageViewRows(db)
    .where("messages.room_id", "=", message.roomId)
    .where("messages.id", side === "before" ? "<" : ">", message.id)
    .orderBy("messages.id", side === "before" ? "desc" : "asc")
    .limit(limit);
  select =
    message.threadId === null
      ? select.where("messages.thread_id", "is", null)
      : select.where("messages.thread_id", "=", message.threadId);
  return select.execute();
}

/** The message with that id, whatever its room, if it exists. */
export async function findMessageViewRow(
  db: Kysely<Database>,
  messageId: number,
): Promise<MessageViewRow | undefined> {
  return selectMessageViewRows(db).where("messages.id", "=", messageId).executeTakeFirst();
}

/** A reviewer's decision on a flagged message; returns what MESSAGE_CREATED needs. */
export async function setModerationStatus(
  db: Kysely<Database>,
  messageId: number,
  status: ModerationStatusColumn,
): Promise<
  Pick<
    Selectable<MessagesTable>,
    | "id"
    | "room_id"
    | "sender_user_id"
    | "inbound_webhook_id"
    | "created_at"
    | "thread_id"
    | "deleted_at"
    | "revision"
    | "edited_at"
    | "content"
    | "content_format"
  >
> {
  return db
    .updateTable("messages")
    .set({ moderation_status: status })
    .where("id", "=", messageId)
    .returning([
      "content",
      "content_format",
      "id",
      "room_id",
      "sender_user_id",
      "inbound_webhook_id",
      "created_at",
      "thread_id",
      "deleted_at",
      "revision",
      "edited_at",
    ])
    .executeTakeFirstOrThrow();
}

/** What an edit or a delete reads of the message, locked for the rest of the transaction. */
export type MessageForChange = Pick<
  Selectable<MessagesTable>,
  | "id"
  | "room_id"
  | "sender_user_id"
  | "inbound_webhook_id"
  | "content"
  | "content_format"
  | "moderation_status"
  | "created_at"
  | "thread_id"
  | "revision"
  | "edited_at"
  | "deleted_at"
>;

/** The message, if it is in that room, read FOR UPDATE where rows lock (PostgreSQL). */
export async function findMessageForChange(
  db: Kysely<Database>,
  roomId: number,
  messageId: number,
): Promise<MessageForChange | undefined> {
  return withRowLock(
    db,
    db
      .selectFrom("messages")
      .select([
        "id",
        "room_id",
        "sender_user_id",
        "inbound_webhook_id",
        "content",
        "content_format",
        "moderation_status",
        "created_at",
        "thread_id",
        "revision",
        "edited_at",
        "deleted_at",
      ])
      .where("id", "=", messageId)
      .where("room_id", "=", roomId),
  ).executeTakeFirst();
}

/** Keeps a version an edit replaces. */
export async function insertRevision(
  db: Kysely<Database>,
  revision: MessageRevisionsTable,
): Promise<void> {
  await db.insertInto("message_revisions").values(revision).execute();
}

/** An edit: the new content becomes the message's current revision. */
export async function updateMessageContent(
  db: Kysely<Database>,
  messageId: number,
  change: {
    content: string;
    content_format: MessagesTable["content_format"];
    content_text: string;
    revision: number;
    moderation_status: ModerationStatusColumn;
    now: number;
  },
): Promise<void> {
  await db
    .updateTable("messages")
    .set({
      content: change.content,
      content_format: change.content_format,
      content_text: change.content_text,
      revision: change.revision,
      moderation_status: change.moderation_status,
      edited_at: change.now,
      updated_at: change.now,
    })
    .where("id", "=", messageId)
    .execute();
}

/** The versions edits replaced, oldest first (the current one is the message itself). */
export async function listRevisions(
  db: Kysely<Database>,
  messageId: number,
): Promise<Array<Selectable<MessageRevisionsTable>>> {
  return db
    .selectFrom("message_revisions")
    .selectAll()
    .where("message_id", "=", messageId)
    .orderBy("revision", "asc")
    .execute();
}

/**
 * A delete: every revision and reaction is deleted and the content emptied, the row kept as a
 * tombstone (its id is never reused and its thread keeps its shape).
 */
export async function eraseMessage(
  db: Kysely<Database>,
  messageId: number,
  now: number,
): Promise<void> {
  await db.deleteFrom("message_revisions").where("message_id", "=", messageId).execute();
  await db.deleteFrom("message_reactions").where("message_id", "=", messageId).execute();
  await db.deleteFrom("message_mentions").where("message_id", "=", messageId).execute();
  await db
    .updateTable("messages")
    .set({ content: "", content_text: "", deleted_at: now, updated_at: now })
    .where("id", "=", messageId)
    .execute();
}

/** A thread's top-level message, as a reply to it needs it, if it is in that room. */
export async function findThreadForReply(
  db: Kysely<Database>,
  roomId: number,
  threadId: number,
): Promise<
  Pick<Selectable<MessagesTable>, "thread_id" | "deleted_at" | "moderation_status"> | undefined
> {
  return db
    .selectFrom("messages")
    .select(["thread_id", "deleted_at", "moderation_status"])
    .where("id", "=", threadId)
    .where("room_id", "=", roomId)
    .executeTakeFirst();
}

/**
 * Counts a reply on the thread's top-level message, if `threadId` is one that may be answered: a
 * top-level, not deleted, visible message of that room. One statement, so a delete or a review
 * racing with the reply either comes first (and nothing is counted: false) or waits for it.
 */
export async function recordReply(
  db: Kysely<Database>,
  roomId: number,
  threadId: number,
  now: number,
  hiddenStatuses: readonly ModerationStatusColumn[],
): Promise<boolean> {
  const result = await db
    .updateTable("messages")
    .set((eb) => ({
      reply_count: eb("reply_count", "+", 1),
      last_reply_at: now,
      updated_at: now,
    }))
    .where("id", "=", threadId)
    .where("room_id", "=", roomId)
    .where("thread_id", "is", null)
    .where("deleted_at", "is", null)
    .where("moderation_status", "not in", hiddenStatuses)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Something about the message changed (a reaction, a reply of its thread deleted). */
export async function touchMessage(
  db: Kysely<Database>,
  messageId: number,
  now: number,
): Promise<void> {
  await db.updateTable("messages").set({ updated_at: now }).where("id", "=", messageId).execute();
}

// The statements of every post, built and compiled once (Kysely's building and compiling cost
// more than SQLite running them).
const selectRoom = compiledOnce<
  { id: number; deleted_at: number | null; kind: "room" | "dm"; visibility: "public" | "private" },
  { roomId: number }
>((db, slot) =>
  db
    .selectFrom("rooms")
    .select(["id", "deleted_at", "kind", "visibility"])
    .where("id", "=", slot("roomId")),
);
const selectMember = compiledOnce<{ user_id: number }, { roomId: number; userId: number }>(
  (db, slot) =>
    db
      .selectFrom("room_members")
      .select("user_id")
      .where("room_id", "=", slot("roomId"))
      .where("user_id", "=", slot("userId")),
);
/** A new message's row (updated_at is its created_at; the other columns start at their default). */
export type NewMessage = Pick<
  MessagesTable,
  | "room_id"
  | "sender_user_id"
  | "inbound_webhook_id"
  | "sender_display_name"
  | "sender_avatar_url"
  | "content"
  | "content_format"
  | "moderation_status"
  | "created_at"
> & { thread_id: number | null; content_text: string };
const insertMessage = compiledOnce<{ id: number; created_at: number }, NewMessage>((db, slot) =>
  db
    .insertInto("messages")
    .values({
      room_id: slot("room_id"),
      sender_user_id: slot("sender_user_id"),
      inbound_webhook_id: slot("inbound_webhook_id"),
      sender_display_name: slot("sender_display_name"),
      sender_avatar_url: slot("sender_avatar_url"),
      content: slot("content"),
      content_format: slot("content_format"),
      content_text: slot("content_text"),
      moderation_status: slot("moderation_status"),
      created_at: slot("created_at"),
      updated_at: slot("created_at"),
      thread_id: slot("thread_id"),
    })
    .returning(["id", "created_at"]),
);

/** The post path's room check: the row whether or not the room was deleted. */
export async function findRoomForPost(
  db: Kysely<Database>,
  roomId: number,
): Promise<
  | { id: number; deleted_at: number | null; kind: "room" | "dm"; visibility: "public" | "private" }
  | undefined
> {
  return (await selectRoom(db, { roomId })).rows[0];
}

const selectRoomAndToken = compiledOnce<
  { id: number; deleted_at: number | null; kind: "room" | "dm"; token_ok: unknown },
  { roomId: number; webhookId: number; tokenHash: string }
>((db, slot) =>
  db
    .selectFrom("rooms")
    .select(["id", "deleted_at", "kind"])
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom("inbound_webhooks")
            .select("id")
            .where("id", "=", slot("webhookId"))
            .where("token_hash", "=", slot("tokenHash"))
            .where("enabled", "=", 1),
        )
        .as("token_ok"),
    )
    .where("id", "=", slot("roomId")),
);

/**
 * The room check of a post by an integration, with its token check (still the webhook's enabled
 * token) in the same statement.
 */
export async function findRoomForIngestPost(
  db: Kysely<Database>,
  roomId: number,
  webhookId: number,
  tokenHash: string,
): Promise<
  { id: number; deleted_at: number | null; kind: "room" | "dm"; tokenCurrent: boolean } | undefined
> {
  const row = (await selectRoomAndToken(db, { roomId, webhookId, tokenHash })).rows[0];
  if (!row) return undefined;
  // 1/0 on SQLite, a boolean on PostgreSQL. (Written out: a rest pattern costs a runtime call.)
  return {
    id: row.id,
    deleted_at: row.deleted_at,
    kind: row.kind,
    tokenCurrent: Boolean(Number(row.token_ok)),
  };
}

/** The post path's membership check. */
export async function isMemberForPost(
  db: Kysely<Database>,
  roomId: number,
  userId: number,
): Promise<boolean> {
  return (await selectMember(db, { roomId, userId })).rows.length > 0;
}

export async function insertMessageRow(
  db: Kysely<Database>,
  message: NewMessage,
): Promise<{ id: number; created_at: number }> {
  return (await insertMessage(db, message)).rows[0]!;
}

/**
 * A post as one PostgreSQL statement (ParleyDatabase.statement): the room check, the sender's
 * right to post (a member; an integration whose token, when given, is still its enabled token),
 * the message, and the "emitting" row that makes the unit of work add MESSAGE_CREATED's stream
 * notification and fan-out (to its audience: see EVENT_AUDIENCE). When a check fails
 * it inserts nothing and its answer says which (id null). Parameters: see postStatementValues.
 */
export const POST_MESSAGE_CTES = `"room" as (select "deleted_at", "kind", "visibility" from "rooms" where "id" = $1::bigint),
"allowed" as (
  select 1 from "room"
  where "deleted_at" is null
    and ($2::bigint is null or exists (
      select 1 from "room_members" where "room_id" = $1::bigint and "user_id" = $2::bigint))
    and ($9::text is null or exists (
      select 1 from "inbound_webhooks"
      where "id" = $3::bigint and "token_hash" = $9::text and "enabled" = 1))),
"message" as (
  insert into "messages" ("room_id", "sender_user_id", "inbound_webhook_id", "sender_display_name",
    "sender_avatar_url", "content", "content_format", "moderation_status", "created_at",
    "updated_at", "content_text")
  select $1::bigint, $2::bigint, $3::bigint, $4::text, $5::text, $6::text, $7::text, 'none',
    $8::bigint, $8::bigint, $10::text
  from "allowed"
  returning "id", "created_at"),
"emitting" as (select "id" from "message")`;

/**
 * The answer's columns: whether the room is open to be told about (live, and not a private room:
 * its non-members are answered as if it did not exist), and the new message (null when refused).
 */
export const POST_MESSAGE_ANSWER = `exists (select 1 from "room" where "deleted_at" is null
    and ("kind" = 'dm' or "visibility" = 'public')) as "room_open",
  (select "id" from "message") as "id", (select "created_at" from "message") as "created_at"`;

export interface PostMessageAnswer {
  room_open: boolean;
  id: number | null;
  created_at: number | null;
}

/**
 * Many posts as one PostgreSQL statement (the combined form of POST_MESSAGE_CTES, see
 * StatementBatcher): the same checks per post over "input" (one row per post, columns
 * POST_MESSAGE_COLUMNS), the message ids drawn in the posts' order, then the messages of the posts
 * whose checks passed, and the "emitting" rows (one per message). A refused post inserts
 * nothing and its answer row says why (id null), as in the single form.
 */
export const POST_MESSAGE_BATCH_CTES = `"checked" as (
  select i."ord", (r."id" is not null and r."deleted_at" is null
      and (r."kind" = 'dm' or r."visibility" = 'public')) as "room_open",
    (r."id" is not null and r."deleted_at" is null
      and (i."sender_user_id" is null or exists (
        select 1 from "room_members" m
        where m."room_id" = i."room_id" and m."user_id" = i."sender_user_id"))
      and (i."token_hash" is null or exists (
        select 1 from "inbound_webhooks" w
        where w."id" = i."inbound_webhook_id" and w."token_hash" = i."token_hash"
          and w."enabled" = 1))) as "allowed"
  from "input" i left join "rooms" r on r."id" = i."room_id"),
"ids" as (
  select c."ord", nextval('"messages_id_seq"') as "id" from "checked" c
  where c."allowed" order by c."ord"),
"message" as (
  insert into "messages" ("id", "room_id", "sender_user_id", "inbound_webhook_id",
    "sender_display_name", "sender_avatar_url", "content", "content_format", "moderation_status",
    "created_at", "updated_at", "content_text")
  select d."id", i."room_id", i."sender_user_id", i."inbound_webhook_id", i."sender_display_name",
    i."sender_avatar_url", i."content", i."content_format", 'none', i."created_at", i."created_at",
    i."content_text"
  from "ids" d join "input" i on i."ord" = d."ord"
  returning "id", "created_at"),
"emitting" as (select "ord", "id" from "ids")`;

/** The combined form's answer: POST_MESSAGE_ANSWER's columns, one row per post ("ord"). */
export const POST_MESSAGE_BATCH_ANSWER = `select c."ord", c."room_open", m."id", m."created_at"
  from "checked" c left join "ids" d on d."ord" = c."ord" left join "message" m on m."id" = d."id"`;

/** The columns of the combined form's "input" and their types: postStatementValues, in order. */
export const POST_MESSAGE_COLUMNS = [
  "room_id",
  "sender_user_id",
  "inbound_webhook_id",
  "sender_display_name",
  "sender_avatar_url",
  "content",
  "content_format",
  "created_at",
  "token_hash",
  "content_text",
] as const;
export const POST_MESSAGE_TYPES = [
  "bigint",
  "bigint",
  "bigint",
  "text",
  "text",
  "text",
  "text",
  "bigint",
  "text",
  "text",
] as const;

/**
 * POST_MESSAGE_CTES for a post that must win a claim to be written (PostClaim in post-message.ts:
 * an idempotency key): the message id is drawn first ("ids", one row when the checks pass), the
 * claim's CTE `claim` (named "claimed", over "ids", at most one row: none when another request
 * holds the claim) writes the claim with that id, and the message is inserted only when it was
 * won. A lost claim writes nothing but the id drawn (a gap in the sequence). Parameters: the
 * post's $1..$10 (postStatementValues), then the claim's.
 */
export function postMessageClaimedCtes(claim: string): string {
  return `"room" as (select "deleted_at", "kind", "visibility" from "rooms" where "id" = $1::bigint),
"allowed" as (
  select 1 from "room"
  where "deleted_at" is null
    and ($2::bigint is null or exists (
      select 1 from "room_members" where "room_id" = $1::bigint and "user_id" = $2::bigint))
    and ($9::text is null or exists (
      select 1 from "inbound_webhooks"
      where "id" = $3::bigint and "token_hash" = $9::text and "enabled" = 1))),
"ids" as (select nextval('"messages_id_seq"') as "id" from "allowed"),
${claim},
"message" as (
  insert into "messages" ("id", "room_id", "sender_user_id", "inbound_webhook_id",
    "sender_display_name", "sender_avatar_url", "content", "content_format", "moderation_status",
    "created_at", "updated_at", "content_text")
  select d."id", $1::bigint, $2::bigint, $3::bigint, $4::text, $5::text, $6::text, $7::text, 'none',
    $8::bigint, $8::bigint, $10::text
  from "ids" d
  where exists (select 1 from "claimed")
  returning "id", "created_at"),
"emitting" as (select "id" from "message")`;
}

/** POST_MESSAGE_ANSWER, and whether the checks passed but the claim was lost (nothing written). */
export const POST_MESSAGE_CLAIMED_ANSWER = `${POST_MESSAGE_ANSWER},
  (exists (select 1 from "allowed") and not exists (select 1 from "claimed")) as "claim_lost"`;

/**
 * The combined form of postMessageClaimedCtes (see POST_MESSAGE_BATCH_CTES): the same checks per
 * post, an id drawn for each post whose checks pass, then the claims' CTEs `claims` over "ids"
 * (ord, id) and "input", ending with "won" (ord, id): the posts whose claim was won, and only
 * those are inserted. "input" has POST_MESSAGE_COLUMNS, then the claim's columns.
 */
export function postMessageClaimedBatchCtes(claims: string): string {
  return `${POST_MESSAGE_BATCH_CTES.slice(0, POST_MESSAGE_BATCH_CTES.indexOf('"message" as ('))}${claims},
"message" as (
  insert into "messages" ("id", "room_id", "sender_user_id", "inbound_webhook_id",
    "sender_display_name", "sender_avatar_url", "content", "content_format", "moderation_status",
    "created_at", "updated_at", "content_text")
  select w."id", i."room_id", i."sender_user_id", i."inbound_webhook_id", i."sender_display_name",
    i."sender_avatar_url", i."content", i."content_format", 'none', i."created_at", i."created_at",
    i."content_text"
  from "won" w join "input" i on i."ord" = w."ord"
  returning "id", "created_at"),
"emitting" as (select "ord", "id" from "won")`;
}

/** The answer of postMessageClaimedBatchCtes: POST_MESSAGE_BATCH_ANSWER's columns and "claim_lost". */
export const POST_MESSAGE_CLAIMED_BATCH_ANSWER = `select c."ord", c."room_open", m."id", m."created_at",
    (c."allowed" and w."ord" is null) as "claim_lost"
  from "checked" c left join "won" w on w."ord" = c."ord" left join "message" m on m."id" = w."id"`;

/** The values of POST_MESSAGE_CTES, in order (a top-level post: replies take the transaction). */
export function postStatementValues(
  message: Omit<NewMessage, "moderation_status" | "thread_id">,
  tokenHash: string | null,
): unknown[] {
  return [
    message.room_id,
    message.sender_user_id,
    message.inbound_webhook_id,
    message.sender_display_name,
    message.sender_avatar_url,
    message.content,
    message.content_format,
    message.created_at,
    tokenHash,
    message.content_text,
  ];
}
