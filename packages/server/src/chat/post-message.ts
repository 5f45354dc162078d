import { MAX_MESSAGE_FILES } from "@parley/client/wire";
import type { Kysely } from "kysely";
import type { AppContext } from "../app-context.js";
import type { RequestTrace } from "../tracing/request-trace.js";
import { writesInOneStatement } from "../db/dialect.js";
import type { Database } from "../db/schema.js";
import type { StatementUnit } from "../db/unit-of-work.js";
import { AppError } from "../errors/app-error.js";
import { eventData } from "../events/event-catalogue.js";
import { STATEMENT_HOLE } from "../events/outbox.js";
import type { ModerationStatus } from "../safety/moderation/moderation-decision.js";
import { attachFiles } from "./files-repository.js";
import { flagForModeration } from "./flag-for-moderation.js";
import {
  findRoomForIngestPost,
  findRoomForPost,
  insertMessageRow,
  isMemberForPost,
  POST_MESSAGE_ANSWER,
  POST_MESSAGE_BATCH_ANSWER,
  POST_MESSAGE_BATCH_CTES,
  POST_MESSAGE_COLUMNS,
  POST_MESSAGE_TYPES,
  POST_MESSAGE_CTES,
  POST_MESSAGE_CLAIMED_ANSWER,
  POST_MESSAGE_CLAIMED_BATCH_ANSWER,
  postMessageClaimedBatchCtes,
  postMessageClaimedCtes,
  postStatementValues,
  type NewMessage,
  type PostMessageAnswer,
  recordReply,
} from "./messages-repository.js";
import { HIDDEN_STATUSES } from "./message-visibility.js";
import { mentionCandidates, resolveMentions } from "./mentions.js";
import { refuseNonMember } from "./room-access.js";
import { recordMentions } from "./rooms-repository.js";
import { screenMessageContent } from "./screen-message-content.js";

export type MessageSender =
  | { type: "user"; userId: number; username: string; displayName: string }
  | {
      type: "integration";
      inboundWebhookId: number;
      displayName: string;
      avatarUrl: string | null;
      /**
       * The hash of the token it posts with (ingest): checked in the post's own transaction, so a
       * token disabled, rotated or deleted since it was looked up (ingest caches the lookup) posts
       * nothing and the post answers not_found.
       */
      tokenHash?: string;
    };

/**
 * A claim the post writes in its own unit of work, and must win to be written at all: an inbound
 * webhook's idempotency key with the answer it keeps (webhooks/inbound/idempotency/). Lost
 * (another request holds it), the post writes nothing and throws `lost()`.
 */
export interface PostClaim {
  /**
   * In the post's transaction, once the message row is written: writes the claim; false when it
   * is lost (the transaction then rolls back).
   */
  keep(db: Kysely<Database>, posted: PostedMessage): Promise<boolean>;
  /**
   * The claim in the post's single statement (PostgreSQL), for the post as `posted` describes it
   * (its id STATEMENT_HOLE, known only to the statement); undefined when it cannot be written so
   * (the post then takes the transaction).
   */
  statement(posted: PostedMessage): ClaimStatement | undefined;
  lost(): Error;
}

/** A PostClaim's part of the post's statement (see postMessageClaimedCtes). */
export interface ClaimStatement {
  /** Its CTE "claimed", over "ids", its parameters from `first`; a fixed text. */
  cte(first: number): string;
  values: unknown[];
  /** Its columns in the combined form's "input", their types, and its CTEs, ending with "won". */
  combined: { columns: ReadonlyArray<string>; types: ReadonlyArray<string>; ctes: string };
}

export interface PostMessageInput {
  roomId: number;
  /** Unvalidated: checked here by the content rules, so every path answers the same codes. */
  content: unknown;
  contentFormat?: unknown;
  /**
   * Unvalidated: a reply's thread, the id of a top-level, not deleted, visible message of the same
   * room (else invalid_thread); absent or null at top level.
   */
  threadId?: unknown;
  /**
   * Unvalidated: the files the message carries, ids of files the sender (a user) uploaded to this
   * room that no message carries yet (else invalid_file); absent or empty: none.
   */
  fileIds?: unknown;
  sender: MessageSender;
  /**
   * The trace of the request that posts (docs/webhooks.md, "Trace context"), handed down by the
   * route; absent: the trace carried by the request's context, if any (request-trace.ts).
   */
  trace?: RequestTrace | undefined;
  /** The content's links were written by Parley's formatter (screenMessageContent). */
  composedLinks?: boolean;
  /** A claim the post must win, written with it (an idempotency key); absent: none. */
  claim?: PostClaim | undefined;
}

export interface PostedMessage {
  id: number;
  roomId: number;
  createdAt: number;
  moderationStatus: "none" | ModerationStatus;
}

function roomNotFound(roomId: number): AppError {
  return new AppError("not_found", `no room ${roomId}`);
}

function invalidThread(threadId: unknown): AppError {
  return new AppError(
    "invalid_thread",
    `threadId ${JSON.stringify(threadId)} is not a top-level, not deleted message of this room`,
  );
}

function invalidFile(detail: string): AppError {
  return new AppError("invalid_file", detail);
}

/** The file ids as sent: absent, or a list of at most 10 different positive safe integers. */
function fileIdsOf(value: unknown, sender: MessageSender): number[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidFile("fileIds must be a list of file ids");
  if (value.length === 0) return [];
  // Files are uploaded by users; an inbound webhook has none to attach.
  if (sender.type !== "user") throw invalidFile("an integration cannot attach files");
  if (value.length > MAX_MESSAGE_FILES)
    throw invalidFile(`a message carries at most ${MAX_MESSAGE_FILES} files`);
  for (const id of value) {
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 1)
      throw invalidFile(`${JSON.stringify(id)} is not a file id`);
  }
  if (new Set(value).size !== value.length) throw invalidFile("fileIds names a file twice");
  return value as number[];
}

/** The thread id as sent: absent (or null) at top level, else a positive safe integer. */
function threadIdOf(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1)
    throw invalidThread(value);
  return value;
}

/**
 * Posts a message into a room: the checks every content goes through (screenMessageContent:
 * validation, HTML sanitization, DLP, AI moderation), then ONE unit of work that writes the
 * message and emits its events (on PostgreSQL, when moderation lets a top-level post through, one
 * statement: see docs/architecture.md, "The write path of a post"). A reply (`threadId`) also
 * counts itself on its thread's top-level message, and a post with `fileIds` takes its files, in
 * the same transaction.
 * MESSAGE_CREATED fires for visible messages (its audience, in the catalogue, keeps a DM's from
 * integrations); a QUARANTINED message is hidden pending review and fires only its moderation event (MESSAGE_CREATED follows if a reviewer approves it).
 */
export async function postMessage(
  ctx: AppContext,
  input: PostMessageInput,
): Promise<PostedMessage> {
  const { stored, format, text, moderation } = await screenMessageContent(
    ctx,
    input.content,
    input.contentFormat,
    { composedLinks: input.composedLinks === true },
  );
  const threadId = threadIdOf(input.threadId);
  const fileIds = fileIdsOf(input.fileIds, input.sender);
  // Parsed only when the content holds an "@"; resolved against the room's members in the
  // transaction, with one query.
  const candidates = mentionCandidates(stored, format);

  const sender = input.sender;
  const senderId = sender.type === "user" ? sender.userId : null;
  const tokenHash = sender.type === "integration" ? (sender.tokenHash ?? null) : null;
  const row = (now: number): Omit<NewMessage, "moderation_status" | "thread_id"> => ({
    room_id: input.roomId,
    sender_user_id: senderId,
    inbound_webhook_id: sender.type === "integration" ? sender.inboundWebhookId : null,
    sender_display_name: sender.displayName,
    sender_avatar_url: sender.type === "integration" ? sender.avatarUrl : null,
    content: stored,
    content_format: format,
    content_text: text,
    created_at: now,
  });

  // The common case on PostgreSQL, a top-level post moderation let through that mentions no one:
  // one statement, one round trip,
  // sharing its commit with the posts that arrive with it. The same checks, rows, events and
  // errors as the transaction below, which SQLite (in process, no round trips) and the rarer
  // posts take.
  if (
    !moderation &&
    threadId === null &&
    candidates.length === 0 &&
    fileIds.length === 0 &&
    writesInOneStatement(ctx.database.dialect)
  ) {
    const now = ctx.now();
    const claim = input.claim?.statement({
      id: STATEMENT_HOLE,
      roomId: input.roomId,
      createdAt: now,
      moderationStatus: "none",
    });
    if (!input.claim || claim)
      return ctx.database.statement({
        ...postStatement(input, postStatementValues(row(now), tokenHash), now, claim),
        trace: input.trace,
      });
  }

  return ctx.database.transaction(async (tx) => {
    const room =
      tokenHash !== null && sender.type === "integration"
        ? await findRoomForIngestPost(tx.db, input.roomId, sender.inboundWebhookId, tokenHash)
        : await findRoomForPost(tx.db, input.roomId);
    if (!room || room.deleted_at !== null) throw roomNotFound(input.roomId);
    if (sender.type === "user") {
      if (!(await isMemberForPost(tx.db, input.roomId, sender.userId)))
        throw "visibility" in room
          ? refuseNonMember(room, input.roomId)
          : new AppError("not_a_member", `you are not a member of room ${input.roomId}`);
    }
    // A token disabled, rotated or deleted since ingest looked it up: the same answer.
    if ("tokenCurrent" in room && !room.tokenCurrent) throw roomNotFound(input.roomId);
    const now = ctx.now();
    if (
      threadId !== null &&
      !(await recordReply(tx.db, input.roomId, threadId, now, HIDDEN_STATUSES))
    )
      throw invalidThread(threadId);
    const mentions = await resolveMentions(tx.db, input.roomId, candidates);
    const message = await insertMessageRow(tx.db, {
      ...row(now),
      moderation_status: moderation?.status ?? "none",
      thread_id: threadId,
    });
    const posted: PostedMessage = {
      id: message.id,
      roomId: input.roomId,
      createdAt: message.created_at,
      moderationStatus: moderation?.status ?? "none",
    };
    // Lost: the transaction rolls back, the message with it.
    if (input.claim && !(await input.claim.keep(tx.db, posted))) throw input.claim.lost();
    // Each file goes with one message: taken in one statement, so a second post naming it finds
    // it carried already (and the whole post rolls back).
    if (
      fileIds.length > 0 &&
      (await attachFiles(tx.db, {
        messageId: message.id,
        roomId: input.roomId,
        uploaderId: senderId!,
        fileIds,
      })) !== fileIds.length
    )
      throw invalidFile(
        `fileIds must name files you uploaded to room ${input.roomId} that no message carries yet`,
      );
    // For mention counts (a hidden message's count once it is approved: the count reads its status).
    await recordMentions(
      tx.db,
      { id: message.id, roomId: input.roomId, senderId },
      mentions,
      false,
    );

    // Who hears it (in a DM, its members' streams only) is the catalogue's rule: EVENT_AUDIENCE.
    if (moderation?.status !== "QUARANTINED") {
      await tx.emit(
        "MESSAGE_CREATED",
        eventData.messageCreated({
          roomId: input.roomId,
          messageId: message.id,
          senderId,
          createdAt: message.created_at,
          inboundWebhookId: sender.type === "integration" ? sender.inboundWebhookId : null,
          threadId,
          mentions,
        }),
      );
    }
    if (moderation) {
      await flagForModeration(ctx, tx, {
        messageId: message.id,
        roomId: input.roomId,
        senderId,
        revision: 1,
        moderation,
        now,
      });
    }
    return posted;
  }, input.trace);
}

/**
 * The texts of a post with a claim (its name, CTEs, answers and combined form): the claim's texts
 * are fixed, so each pair is assembled once, not at every post. Found by the claim's CTE, then
 * its combined CTEs: the claim hands the same strings each time, whose hashes the engine keeps,
 * so the lookups do not read the texts.
 */
const claimedForms = new Map<string, Map<string, ClaimedForm>>();
type ClaimedForm = Omit<StatementUnit<unknown, unknown>, "values" | "settle">;
function claimedForm(cte: string, combined: ClaimStatement["combined"]): ClaimedForm {
  let byCombined = claimedForms.get(cte);
  if (byCombined === undefined) {
    if (claimedForms.size >= 16) claimedForms.clear();
    claimedForms.set(cte, (byCombined = new Map()));
  }
  let form = byCombined.get(combined.ctes);
  if (form === undefined) {
    form = {
      name: "parley_post_message_claimed",
      ctes: postMessageClaimedCtes(cte),
      answer: POST_MESSAGE_CLAIMED_ANSWER,
      combined: {
        columns: [...POST_MESSAGE_COLUMNS, ...combined.columns],
        types: [...POST_MESSAGE_TYPES, ...combined.types],
        ctes: postMessageClaimedBatchCtes(combined.ctes),
        answer: POST_MESSAGE_CLAIMED_BATCH_ANSWER,
      },
    };
    byCombined.set(combined.ctes, form);
  }
  return form;
}

/**
 * The post as one statement (PostgreSQL, see ParleyDatabase.statement), for `values` =
 * postStatementValues, with the claim it must win when there is one (postMessageClaimedCtes).
 * test/unit/chat/post-statement.test.ts prints the SQL it assembles to.
 */
export function postStatement(
  input: PostMessageInput,
  values: unknown[],
  now: number,
  claim?: ClaimStatement,
): StatementUnit<PostMessageAnswer & { claim_lost?: boolean }, PostedMessage> {
  const sender = input.sender;
  const senderId = sender.type === "user" ? sender.userId : null;
  const form = claim
    ? {
        ...claimedForm(claim.cte(values.length + 1), claim.combined),
        values: [...values, ...claim.values],
      }
    : {
        name: "parley_post_message",
        ctes: POST_MESSAGE_CTES,
        values,
        answer: POST_MESSAGE_ANSWER,
        combined: {
          columns: POST_MESSAGE_COLUMNS,
          types: POST_MESSAGE_TYPES,
          ctes: POST_MESSAGE_BATCH_CTES,
          answer: POST_MESSAGE_BATCH_ANSWER,
        },
      };
  return {
    ...form,
    emit: {
      event: "MESSAGE_CREATED",
      data: (messageId) =>
        eventData.messageCreated({
          roomId: input.roomId,
          messageId,
          senderId,
          createdAt: now,
          inboundWebhookId: sender.type === "integration" ? sender.inboundWebhookId : null,
          threadId: null,
          mentions: [],
        }),
    },
    settle(answer) {
      // The checks passed, and another request holds the claim: nothing was written.
      if (answer.claim_lost) throw input.claim!.lost();
      if (answer.id === null || answer.created_at === null) {
        if (answer.room_open && sender.type === "user")
          throw new AppError("not_a_member", `you are not a member of room ${input.roomId}`);
        throw roomNotFound(input.roomId);
      }
      return {
        id: answer.id,
        roomId: input.roomId,
        createdAt: answer.created_at,
        moderationStatus: "none",
      };
    },
  };
}
