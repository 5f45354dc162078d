import type { Kysely, Selectable } from "kysely";
import { compiledOnce } from "../db/compiled-query.js";
import type { Database, MessagesTable } from "../db/schema.js";

/**
 * Queries on `messages`, and the statements of the post path. Messages are never deleted: a
 * rejected one is hidden by its `moderation_status`. Every function takes the database or a
 * transaction.
 */
export type ModerationStatusColumn = MessagesTable["moderation_status"];

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
 * A room's messages newest first, ids below `beforeId`, leaving out the `hiddenStatuses`;
 * `limit + 1` rows (the extra one tells whether another page exists).
 */
export async function listRoomMessageViewRows(
  db: Kysely<Database>,
  roomId: number,
  page: {
    beforeId: number | undefined;
    limit: number;
    hiddenStatuses: readonly ModerationStatusColumn[];
  },
): Promise<MessageViewRow[]> {
  let select = selectMessageViewRows(db)
    .where("messages.room_id", "=", roomId)
    .orderBy("messages.id", "desc")
    .limit(page.limit + 1);
  if (page.hiddenStatuses.length > 0)
    select = select.where("messages.moderation_status", "not in", page.hiddenStatuses);
  if (page.beforeId !== undefined) select = select.where("messages.id", "<", page.beforeId);
  return select.execute();
}

/**
 * A room's messages in id order, leaving out the `hiddenStatuses`: those with an id above
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
    .orderBy("messages.id", "asc");
  if (page.hiddenStatuses.length > 0)
    select = select.where("messages.moderation_status", "not in", page.hiddenStatuses);
  if (page.afterId !== undefined) select = select.where("messages.id", ">", page.afterId);
  if (page.ids !== undefined) select = select.where("messages.id", "in", page.ids);
  if (page.limit !== undefined) select = select.limit(page.limit);
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
    "id" | "room_id" | "sender_user_id" | "inbound_webhook_id" | "created_at"
  >
> {
  return db
    .updateTable("messages")
    .set({ moderation_status: status })
    .where("id", "=", messageId)
    .returning(["id", "room_id", "sender_user_id", "inbound_webhook_id", "created_at"])
    .executeTakeFirstOrThrow();
}

// The statements of every post, built and compiled once (Kysely's building and compiling cost
// more than SQLite running them).
const selectRoom = compiledOnce<
  { id: number; deleted_at: number | null; kind: "room" | "dm" },
  { roomId: number }
>((db, slot) =>
  db.selectFrom("rooms").select(["id", "deleted_at", "kind"]).where("id", "=", slot("roomId")),
);
const selectMember = compiledOnce<{ user_id: number }, { roomId: number; userId: number }>(
  (db, slot) =>
    db
      .selectFrom("room_members")
      .select("user_id")
      .where("room_id", "=", slot("roomId"))
      .where("user_id", "=", slot("userId")),
);
export type NewMessage = Omit<MessagesTable, "id">;
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
      moderation_status: slot("moderation_status"),
      created_at: slot("created_at"),
    })
    .returning(["id", "created_at"]),
);

/** The post path's room check: the row whether or not the room was deleted. */
export async function findRoomForPost(
  db: Kysely<Database>,
  roomId: number,
): Promise<{ id: number; deleted_at: number | null; kind: "room" | "dm" } | undefined> {
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
  const { token_ok, ...room } = row;
  // 1/0 on SQLite, a boolean on PostgreSQL.
  return { ...room, tokenCurrent: Boolean(Number(token_ok)) };
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
export const POST_MESSAGE_CTES = `"room" as (select "deleted_at" from "rooms" where "id" = $1::bigint),
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
    "sender_avatar_url", "content", "content_format", "moderation_status", "created_at")
  select $1::bigint, $2::bigint, $3::bigint, $4::text, $5::text, $6::text, $7::text, 'none',
    $8::bigint
  from "allowed"
  returning "id", "created_at"),
"emitting" as (select "id" from "message")`;

/** The answer's columns: whether the room is open, and the new message (null when refused). */
export const POST_MESSAGE_ANSWER = `exists (select 1 from "room" where "deleted_at" is null) as "room_open",
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
  select i."ord", (r."id" is not null and r."deleted_at" is null) as "room_open",
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
    "created_at")
  select d."id", i."room_id", i."sender_user_id", i."inbound_webhook_id", i."sender_display_name",
    i."sender_avatar_url", i."content", i."content_format", 'none', i."created_at"
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
] as const;

/** The values of POST_MESSAGE_CTES, in order. */
export function postStatementValues(
  message: Omit<NewMessage, "moderation_status">,
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
  ];
}
