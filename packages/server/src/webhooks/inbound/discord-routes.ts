import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import {
  DiscordEditParamsSchema,
  DiscordErrorSchema,
  DiscordExecuteParamsSchema,
  DiscordExecuteQuerySchema,
  DiscordMessageParamsSchema,
  DiscordMessageQuerySchema,
  DiscordMessageSchema,
  DiscordWebhookParamsSchema,
} from "@parley/client/wire";
import type { AppContext } from "../../app-context.js";
import { MAX_CONTENT_BYTES } from "../../chat/content-rules.js";
import type { AppError } from "../../errors/app-error.js";
import { logServerFault } from "../../plugins/problem-details.js";
import { toAppError } from "../../plugins/to-app-error.js";
import {
  DISCORD_CODES,
  DiscordApiError,
  emptyMessage,
  invalidFormBody,
  unknownMessage,
} from "./discord-api-error.js";
import { discordPayloadToMessage } from "./discord-message.js";
import {
  checkDiscordApiVersion,
  discordMessageObject,
  onDiscordMessage,
  parseDiscordId,
  readDiscordMessage,
  resolveDiscordTarget,
} from "./discord-webhook.js";
import type { KeptAnswer } from "./idempotency/run-idempotent.js";
import {
  checkIngestEditable,
  deleteIngestMessage,
  editIngestMessage,
  ingestMessage,
  type IngestAnswer,
  type IngestOnce,
} from "./ingest.js";
import { answerOnce, keptJson, RAW_BODY } from "./ingest-request.js";

/** Marks a multipart body: the names of its file parts, refused once the token is known good. */
const FILE_PARTS = Symbol("parley.discordFileParts");
type MultipartBody = Record<string, unknown> & { [FILE_PARTS]: string[] };

/** Form fields Discord reads when a multipart body has no `payload_json`. */
const FORM_FIELDS = ["content", "username", "avatar_url"];

/**
 * `multipart/form-data` as discord.js and Discord tools send it: the message as JSON in
 * `payload_json` (or as plain `content`, `username`, `avatar_url` fields), files in other parts.
 * Parsed with the platform's own FormData reader, within the route's body limit.
 */
async function parseMultipart(
  request: FastifyRequest,
  contentType: string,
  raw: Buffer,
): Promise<MultipartBody> {
  let form: FormData;
  try {
    form = await new Response(Uint8Array.from(raw), {
      headers: { "content-type": contentType },
    }).formData();
  } catch {
    throw invalidFormBody({
      path: [],
      code: "MULTIPART_INVALID",
      message: "The multipart body could not be read.",
    });
  }
  const files: string[] = [];
  let fields: Record<string, unknown> = {};
  let payloadJson: string | undefined;
  for (const [name, value] of form) {
    if (typeof value !== "string") files.push(name);
    else if (name === "payload_json") payloadJson = value;
    else if (FORM_FIELDS.includes(name)) fields[name] = value;
  }
  // What Idempotency-Key compares: the message as sent, not the multipart bytes, whose boundary
  // a sender draws anew for each attempt.
  (request as FastifyRequest & { [RAW_BODY]: Buffer | null })[RAW_BODY] = Buffer.from(
    JSON.stringify([payloadJson ?? null, fields, files]),
  );
  if (payloadJson !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payloadJson);
    } catch {
      throw new DiscordApiError(400, {
        message: "The request body contains invalid JSON.",
        code: DISCORD_CODES.invalidJson,
      });
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw invalidFormBody({
        path: ["payload_json"],
        code: "DICT_TYPE_CONVERT",
        message: "Only dictionaries may be used in a DictType",
      });
    fields = parsed as Record<string, unknown>;
  }
  return { ...fields, [FILE_PARTS]: files };
}

/** The body without its file parts, which answer 400 (checked after the webhook is known). */
function refuseFileParts(body: unknown): unknown {
  const files = (body as Partial<MultipartBody> | undefined)?.[FILE_PARTS] ?? [];
  if (files.length > 0)
    throw invalidFormBody({
      path: [files[0]!],
      code: "FILES_NOT_ACCEPTED",
      message: "Parley does not take files through a webhook; link to them instead.",
    });
  return body;
}

/** `?wait=`: Discord reads true and false (any case), and 1 and 0. */
function readWait(value: unknown): boolean {
  if (value === undefined) return false;
  const text = String(value).toLowerCase();
  if (text === "true" || text === "1") return true;
  if (text === "false" || text === "0") return false;
  throw invalidFormBody({
    path: ["wait"],
    code: "BOOLEAN_TYPE_CONVERT",
    message: "Must be either true or false.",
  });
}

function readThreadId(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const id = parseDiscordId(value);
  if (id === undefined)
    throw invalidFormBody({
      path: ["thread_id"],
      code: "NUMBER_TYPE_COERCE",
      message: `Value "${String(value)}" is not snowflake.`,
    });
  return id;
}

/**
 * How a Parley failure answers on this route: Discord's status and JSON code where Discord has
 * one, else Parley's status with code 0 and Parley's message. The headers (Retry-After on a 503)
 * are kept.
 */
function discordAnswer(error: AppError, reply: FastifyReply): DiscordApiError {
  switch (error.code) {
    case "not_found":
      return new DiscordApiError(404, {
        message: "Unknown Webhook",
        code: DISCORD_CODES.unknownWebhook,
      });
    case "message_not_found":
    case "message_deleted":
      return unknownMessage();
    case "rate_limited": {
      // Discord's 429 has no code; retry_after in seconds (discord.js reads the Retry-After header).
      const retryAfter = Number(reply.getHeader("retry-after") ?? 1);
      return new DiscordApiError(429, {
        message: "You are being rate limited.",
        retry_after: Number.isFinite(retryAfter) ? retryAfter : 1,
        global: false,
      });
    }
    case "invalid_json":
      return new DiscordApiError(400, {
        message: "The request body contains invalid JSON.",
        code: DISCORD_CODES.invalidJson,
      });
    case "body_too_large":
      return new DiscordApiError(413, {
        message: "Request entity too large",
        code: DISCORD_CODES.requestTooLarge,
      });
    case "content_required":
      return emptyMessage();
    case "unsupported_media_type":
      return new DiscordApiError(415, {
        message: "send the body as application/json or multipart/form-data",
        code: DISCORD_CODES.general,
      });
    case "content_too_large":
      return invalidFormBody({
        path: ["content"],
        code: "BASE_TYPE_MAX_LENGTH",
        message: `Must be ${MAX_CONTENT_BYTES} or fewer UTF-8 bytes in length (content and embeds together).`,
      });
    case "invalid_thread":
      return invalidFormBody({
        path: ["thread_id"],
        code: "THREAD_INVALID",
        message: error.detail ?? error.title,
      });
    case "validation_failed":
    case "unknown_field":
      return invalidFormBody({
        path: [String(error.extra.field ?? "body").replace(/^body\.?/, "")].filter(Boolean),
        code: "BASE_TYPE_INVALID",
        message: error.detail ?? error.title,
      });
    case "dlp_blocked":
      return new DiscordApiError(
        error.status,
        {
          message: `Message was blocked by automatic moderation: ${error.detail ?? error.title}`,
          code: DISCORD_CODES.blockedByModeration,
          ruleId: error.extra.ruleId,
        },
        error.headers,
      );
    default:
      return new DiscordApiError(
        error.status,
        { message: error.detail ?? error.title, code: DISCORD_CODES.general },
        error.headers,
      );
  }
}

const errorAnswer = {
  description: "Discord's error shape: {message, code} (429: {message, retry_after, global}).",
  ...DiscordErrorSchema,
};
const errorAnswers = {
  400: errorAnswer,
  404: errorAnswer,
  409: errorAnswer,
  413: errorAnswer,
  415: errorAnswer,
  422: errorAnswer,
  429: errorAnswer,
  503: errorAnswer,
  507: errorAnswer,
} as const;

/**
 * The Discord-compatible routes, `/api/public/discord/v{6..10}/webhooks/{id}/{token}`, so that
 * discord.js' WebhookClient and tools with a "Discord webhook" setting post into Parley by
 * changing the base address. Registered inside the ingest routes' scope: the same `webhook_ingest`
 * bucket per token (shared through Redis), and every post, edit and delete goes through ingest's
 * own functions (content rules, DLP, moderation, the token checked in the write's transaction).
 */
export const discordRoutes: FastifyPluginAsync<{ ctx: AppContext; bodyLimit: number }> = async (
  app,
  { ctx, bodyLimit },
) => {
  app.addContentTypeParser(
    "multipart/form-data",
    { parseAs: "buffer", bodyLimit },
    async (request: FastifyRequest, body: Buffer) =>
      parseMultipart(request, String(request.headers["content-type"]), body),
  );

  app.setErrorHandler(async (error: FastifyError | DiscordApiError, request, reply) => {
    let answer: DiscordApiError;
    if (error instanceof DiscordApiError) answer = error;
    else {
      const known = toAppError(error);
      logServerFault(error, known, request);
      answer = discordAnswer(known, reply);
    }
    for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
    return reply
      .code(answer.status)
      .type("application/json; charset=utf-8")
      .send(JSON.stringify(answer.body));
  });

  // Discord's rate-limit headers beside the draft-standard ones the ingest limit sets, so Discord
  // clients wait for the window before they are refused (discord.js reads X-RateLimit-*).
  app.addHook("onSend", async (_request, reply, payload) => {
    const limit = reply.getHeader("ratelimit-limit");
    if (limit === undefined) return payload;
    const resetAfter = Number(reply.getHeader("ratelimit-reset") ?? 0);
    reply.header("x-ratelimit-limit", String(limit));
    reply.header("x-ratelimit-remaining", String(reply.getHeader("ratelimit-remaining") ?? 0));
    reply.header("x-ratelimit-reset-after", String(resetAfter));
    reply.header("x-ratelimit-reset", ((Date.now() + resetAfter * 1000) / 1000).toFixed(3));
    reply.header("x-ratelimit-bucket", "webhook_ingest");
    if (reply.statusCode === 429) reply.header("x-ratelimit-scope", "user");
    return payload;
  });

  const tags = ["inbound-webhooks"];
  // Third-party payloads, checked by discordPayloadToMessage() and the content rules field by
  // field (NUL refused where it would be stored); unknown fields are ignored.
  const config = { nulGuard: false };
  // Documented, not enforced: Discord's own answers (50035 with the field) come from the handlers,
  // after the webhook is known, as on ingest.
  const validatorCompiler = () => () => true;
  const base = "/api/public/discord/:version/webhooks/:id/:token";

  app.post<{
    Params: { version: string; id: string; token: string };
    Querystring: { wait?: string; thread_id?: string };
    Body: unknown;
  }>(
    base,
    {
      bodyLimit,
      // Posting hands the request's trace down to its unit of work (request-trace.ts).
      config: { ...config, handsTraceDown: true },
      validatorCompiler,
      schema: {
        tags,
        summary: "Execute Webhook, as Discord's (discord.js WebhookClient.send)",
        description:
          "Discord's body: content, embeds (up to 10, rendered to markdown after the content), username and avatar_url (used only when the webhook allows overrides), allowed_mentions; JSON, or multipart/form-data with payload_json (file parts answer 400). With wait=true answers 200 with a Discord message object, else 204. thread_id posts a reply in that thread. Content limits, DLP, moderation, Idempotency-Key and the webhook_ingest rate limit are ingest's. Errors in Discord's shape: 404 10015 Unknown Webhook (unknown id or token, the same answer), 400 50035 Invalid Form Body, 400 50006 Cannot send an empty message, 429 with retry_after.",
        consumes: ["application/json", "multipart/form-data"],
        params: DiscordWebhookParamsSchema,
        querystring: DiscordExecuteQuerySchema,
        body: DiscordExecuteParamsSchema,
        response: {
          200: DiscordMessageSchema,
          204: { type: "null", description: "Posted (without wait=true)." },
          ...errorAnswers,
        },
      },
    },
    async (request, reply) => {
      const { version, id, token } = request.params;
      checkDiscordApiVersion(version);
      const target = await resolveDiscordTarget(ctx, id, token);
      const body = refuseFileParts(request.body);
      const threadId = readThreadId(request.query.thread_id);
      const wait = readWait(request.query.wait);
      const message = discordPayloadToMessage(body ?? {});
      const overrides = target.allowOverrides
        ? { displayName: message.username, avatarUrl: message.avatarUrl }
        : {};
      const sent = (posted: IngestAnswer) =>
        discordMessageObject(target, {
          id: posted.messageId,
          roomId: target.roomId,
          content: message.content!,
          createdAt: Date.parse(posted.timestamp),
          editedAt: null,
          authorName: overrides.displayName ?? target.displayName,
        });
      const post = (once?: IngestOnce) =>
        ingestMessage(
          ctx,
          target,
          {
            content: message.content,
            contentFormat: "markdown",
            threadId,
            trace: request.trace,
            ...overrides,
          },
          once,
        );
      // Without a key, the common case, the answer is serialized by the route's schema as usual.
      if (request.headers["idempotency-key"] === undefined) {
        const posted = await post();
        return wait ? sent(posted) : reply.code(204).send();
      }
      return answerOnce(ctx, request, reply, target, async (claim) => {
        const answer = (posted: IngestAnswer): KeptAnswer =>
          wait ? keptJson(200, sent(posted)) : { status: 204, headers: {}, body: null };
        return answer(await post(claim && { claim, answer }));
      });
    },
  );

  const messagePath = `${base}/messages/:messageId`;
  type MessageRoute = {
    Params: { version: string; id: string; token: string; messageId: string };
    Querystring: { thread_id?: string };
  };
  const messageSchema = (summary: string, description: string) => ({
    tags,
    summary,
    description,
    params: DiscordMessageParamsSchema,
    querystring: DiscordMessageQuerySchema,
  });

  /** The webhook, then the message id: a malformed id is as unknown as another webhook's. */
  const resolveMessage = async (params: MessageRoute["Params"]) => {
    checkDiscordApiVersion(params.version);
    const target = await resolveDiscordTarget(ctx, params.id, params.token);
    const messageId = parseDiscordId(params.messageId);
    if (messageId === undefined) throw unknownMessage();
    return { target, messageId };
  };

  app.get<MessageRoute>(
    messagePath,
    {
      config,
      validatorCompiler,
      schema: {
        ...messageSchema(
          "Get Webhook Message, as Discord's (discord.js WebhookClient.fetchMessage)",
          "A message this webhook posted, as a Discord message object. Any other id, or a deleted message, answers 404 10008 Unknown Message.",
        ),
        response: { 200: DiscordMessageSchema, ...errorAnswers },
      },
    },
    async (request) => {
      const { target, messageId } = await resolveMessage(request.params);
      return readDiscordMessage(ctx, target, messageId);
    },
  );

  app.patch<MessageRoute & { Body: unknown }>(
    messagePath,
    {
      bodyLimit,
      config,
      validatorCompiler,
      schema: {
        ...messageSchema(
          "Edit Webhook Message, as Discord's (discord.js WebhookClient.editMessage)",
          "content and embeds together replace the message (through ingest's edit: content rules, DLP, moderation, MESSAGE_UPDATED); a body with neither changes nothing. Answers 200 with the Discord message object. Any other id answers 404 10008 Unknown Message.",
        ),
        consumes: ["application/json", "multipart/form-data"],
        body: DiscordEditParamsSchema,
        response: { 200: DiscordMessageSchema, ...errorAnswers },
      },
    },
    async (request) => {
      const { target, messageId } = await resolveMessage(request.params);
      // Whose message it is before what the edit holds, as on ingest.
      await onDiscordMessage(() => checkIngestEditable(ctx, target, messageId));
      const body = refuseFileParts(request.body);
      const message = discordPayloadToMessage(body ?? {}, { edit: true });
      if (message.content !== undefined) {
        const content = message.content;
        await onDiscordMessage(() =>
          editIngestMessage(ctx, target, messageId, { content, contentFormat: "markdown" }),
        );
      }
      return readDiscordMessage(ctx, target, messageId);
    },
  );

  app.delete<MessageRoute>(
    messagePath,
    {
      config,
      validatorCompiler,
      schema: {
        ...messageSchema(
          "Delete Webhook Message, as Discord's (discord.js WebhookClient.deleteMessage)",
          "Deletes a message this webhook posted (fires MESSAGE_DELETED; its content is erased). Any other id, or one already deleted, answers 404 10008 Unknown Message.",
        ),
        response: { 204: { type: "null" }, ...errorAnswers },
      },
    },
    async (request, reply) => {
      const { target, messageId } = await resolveMessage(request.params);
      await onDiscordMessage(() => deleteIngestMessage(ctx, target, messageId));
      return reply.code(204).send();
    },
  );
};
