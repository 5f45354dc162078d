import rateLimit from "@fastify/rate-limit";
import type { FastifyError, FastifyPluginAsync, FastifyReply } from "fastify";
import {
  IngestEditParamsSchema,
  IngestEditResultSchema,
  IngestMessageParamsSchema,
  IngestParamsSchema,
  IngestResultSchema,
  IngestTokenParamsSchema,
  SlackIngestParamsSchema,
} from "@parley/client/wire";
import type { AppContext } from "../../app-context.js";
import { validateMessageBody } from "../../chat/content-rules.js";
import { AppError } from "../../errors/app-error.js";
import { problemSchema } from "../../http/schemas.js";
import { logServerFault } from "../../plugins/problem-details.js";
import { toAppError } from "../../plugins/to-app-error.js";
import {
  checkIngestEditable,
  deleteIngestMessage,
  editIngestMessage,
  ingestMessage,
  resolveIngestTarget,
  type IngestAnswer,
  type IngestOnce,
} from "./ingest.js";
import type { KeptAnswer } from "./idempotency/run-idempotent.js";
import { discordRoutes } from "./discord-routes.js";
import { createIngestRateLimiter } from "./ingest-rate-limit.js";
import {
  answerOnce,
  jsonParserOf,
  keptJson,
  lookupHash,
  parseKeepingRawBody,
  RAW_BODY,
  TOKEN_HASH,
  tokenHashOf,
} from "./ingest-request.js";
import { senderRoutes } from "./sender-routes.js";
import { slackPayloadToMessage } from "./slack-message.js";
import { SlackPayloadError } from "./slack-payload-error.js";

/** Largest ingest request body: room for a 16384-byte message with HTML or Slack attachments. */
export const INGEST_BODY_LIMIT = 64 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Marks a form-encoded Slack body; its value is the JSON text of the `payload` field, if any. */
const SLACK_FORM = Symbol("parley.slackForm");
type SlackForm = { [SLACK_FORM]: string | undefined };

/**
 * `payload=<url-encoded json>` as Slack documents it. `curl -d '{"text":"hi"}'` sends raw JSON
 * labelled as a form, and Slack takes it; so does this.
 */
function parseSlackForm(text: string): SlackForm {
  if (text.trimStart().startsWith("{")) return { [SLACK_FORM]: text };
  return { [SLACK_FORM]: new URLSearchParams(text).get("payload") ?? undefined };
}

function readSlackPayload(body: unknown): unknown {
  if (!isObject(body) || !(SLACK_FORM in body)) return body;
  const json = (body as SlackForm)[SLACK_FORM];
  if (json === undefined)
    throw new SlackPayloadError("invalid_payload", "the form has no payload field");
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw new SlackPayloadError("invalid_payload", "the payload field is not valid JSON");
  }
}

/**
 * How the Slack-compatible route answers a failure: Slack's status and bare code where it has one,
 * else Parley's code. Errors are mapped to codes by toAppError(), as on every other route.
 */
function slackAnswer(error: AppError | SlackPayloadError): { status: number; code: string } {
  if (error instanceof SlackPayloadError) return { status: error.status, code: error.code };
  switch (error.code) {
    case "not_found":
      return { status: 404, code: "no_service" };
    case "invalid_json":
    case "validation_failed":
    case "bad_request":
      return { status: error.status, code: "invalid_payload" };
    case "content_required":
      return { status: 400, code: "no_text" };
    case "content_too_large":
      return { status: 400, code: "msg_too_long" };
    default:
      return { status: error.status, code: error.code };
  }
}

/** Slack's success answer, as kept for a replay. */
const SLACK_OK: KeptAnswer = {
  status: 200,
  headers: { "content-type": "text/plain; charset=utf-8" },
  body: "ok",
};

function sendSlackText(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).type("text/plain; charset=utf-8").send(text);
}

const errorAnswers = {
  400: problemSchema,
  404: problemSchema,
  409: problemSchema,
  415: problemSchema,
  422: problemSchema,
  429: problemSchema,
  503: problemSchema,
  507: problemSchema,
} as const;

const slackTextAnswer = {
  type: "string",
  description: "`ok` on success; otherwise a short error code, as Slack answers.",
} as const;

const slackText = (description: string) => ({
  description,
  content: { "text/plain": { schema: slackTextAnswer } },
});

/**
 * The public ingest routes: the token in the path is the only credential. Every form counts
 * against one `webhook_ingest` bucket per token, counted in onRequest, before the body is read or
 * the token looked up, so unknown tokens and bad bodies are limited too.
 */
export const ingestRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const policy = ctx.config.rateLimitWebhookIngest;
  const limiter = await createIngestRateLimiter({
    redisUrl: ctx.config.redisUrl,
    windowMs: policy.windowMs,
    keyPrefix: ctx.config.redisKeyPrefix,
    log: app.log,
  });
  app.addHook("onClose", async () => limiter.close());
  app.decorateRequest(TOKEN_HASH, null);
  app.decorateRequest(RAW_BODY, null);
  parseKeepingRawBody(app, "application/json", jsonParserOf(app));

  // Registered in this plugin's scope only: it limits the two ingest routes and nothing else.
  await app.register(rateLimit, {
    global: true,
    hook: "onRequest",
    max: policy.max,
    timeWindow: policy.windowMs,
    store: limiter.Store,
    // Draft-spec names: RateLimit-Limit / -Remaining / -Reset, plus Retry-After on a 429.
    enableDraftSpec: true,
    keyGenerator: tokenHashOf,
    errorResponseBuilder: (_request, context) =>
      new AppError(
        "rate_limited",
        `this webhook may post ${policy.text} (the webhook_ingest policy); retry in ${context.after}`,
      ),
  });

  const tags = ["inbound-webhooks"];
  // Third-party payloads: the content rules check the fields that are used (refusing NUL in them,
  // or, on the Slack form, dropping it as Slack does); unknown fields are ignored, whatever they hold.
  const config = { nulGuard: false };
  // The posting routes hand the request's trace down to their unit of work (request-trace.ts).
  const postConfig = { ...config, handsTraceDown: true };

  app.post<{ Params: { token: string }; Body: unknown }>(
    "/api/public/webhooks/ingest/:token",
    {
      bodyLimit: INGEST_BODY_LIMIT,
      config: postConfig,
      // The token is checked before the body: a schema failure waits for the content rules.
      attachValidation: true,
      schema: {
        tags,
        summary: "Post a message into the webhook's room (the token is the only credential)",
        description:
          "content: 1..16384 UTF-8 bytes; contentFormat markdown (default) or html (sanitized before it is stored); threadId (optional) a top-level message of the webhook's room to reply to (else 400 invalid_thread). Body at most 64 KiB. Unknown and disabled tokens get the same 404. An Idempotency-Key header (1..255 printable ASCII) posts once per key within 24 h: a repeat answers the first answer with Idempotent-Replayed: true; other body bytes 422 idempotency_key_reused; in flight 409 idempotency_key_in_use.",
        params: IngestTokenParamsSchema,
        body: IngestParamsSchema,
        response: { 200: IngestResultSchema, ...errorAnswers },
      },
    },
    async (request, reply) => {
      const target = await resolveIngestTarget(ctx, lookupHash(request));
      const post = async (once?: IngestOnce) => {
        // The same rules and codes as a member's post; the schema adds nothing they do not check.
        const { content, format } = validateMessageBody(request.body);
        if (request.validationError) throw request.validationError;
        const threadId = (request.body as { threadId?: unknown }).threadId;
        return ingestMessage(
          ctx,
          target,
          { content, contentFormat: format, threadId, trace: request.trace },
          once,
        );
      };
      // Without a key, the common case, the answer is serialized by the route's schema as usual.
      if (request.headers["idempotency-key"] === undefined) return post();
      return answerOnce(ctx, request, reply, target, async (claim) => {
        const answer = (posted: IngestAnswer) => keptJson(200, posted);
        return answer(await post(claim && { claim, answer }));
      });
    },
  );

  app.patch<{ Params: { token: string; messageId: number }; Body: unknown }>(
    "/api/public/webhooks/ingest/:token/messages/:messageId",
    {
      bodyLimit: INGEST_BODY_LIMIT,
      config,
      attachValidation: true,
      schema: {
        tags,
        summary: "Edit a message this webhook posted (fires MESSAGE_UPDATED)",
        description:
          "The same content rules, DLP and moderation as a post; the same content and format answer 200 and fire nothing. Any message this webhook did not post answers 404, as an unknown token. A deleted one answers 410 message_deleted.",
        params: IngestMessageParamsSchema,
        body: IngestEditParamsSchema,
        response: { 200: IngestEditResultSchema, 410: problemSchema, ...errorAnswers },
      },
    },
    async (request) => {
      const failed = request.validationError;
      if (failed && failed.validationContext !== "body") throw failed;
      const target = await resolveIngestTarget(ctx, lookupHash(request));
      const { messageId } = request.params;
      // Whose message it is before what the edit holds.
      await checkIngestEditable(ctx, target, messageId);
      const { content, format } = validateMessageBody(request.body);
      if (failed) throw failed;
      return editIngestMessage(ctx, target, messageId, { content, contentFormat: format });
    },
  );

  app.delete<{ Params: { token: string; messageId: number } }>(
    "/api/public/webhooks/ingest/:token/messages/:messageId",
    {
      config,
      schema: {
        tags,
        summary:
          "Delete a message this webhook posted (fires MESSAGE_DELETED; its content is erased)",
        description:
          "Any message this webhook did not post answers 404, as an unknown token. A deleted one answers 410 message_deleted.",
        params: IngestMessageParamsSchema,
        response: { 204: { type: "null" }, 410: problemSchema, ...errorAnswers },
      },
    },
    async (request, reply) => {
      const target = await resolveIngestTarget(ctx, lookupHash(request));
      await deleteIngestMessage(ctx, target, request.params.messageId);
      return reply.code(204).send();
    },
  );

  // Discord's Execute Webhook and its message routes, in this scope: the same bucket per token.
  await app.register(discordRoutes, { ctx, bodyLimit: INGEST_BODY_LIMIT });

  await app.register(senderRoutes, { ctx });

  await app.register(async (slack) => {
    parseKeepingRawBody(slack, "application/x-www-form-urlencoded", parseSlackForm);

    // Slack tools look for status 200 and the body "ok"; failures answer as Slack does, in plain text.
    slack.setErrorHandler(async (error: FastifyError | SlackPayloadError, request, reply) => {
      const known = error instanceof SlackPayloadError ? error : toAppError(error);
      if (known instanceof AppError) {
        logServerFault(error, known, request);
        // Retry-After on a 503 database_unavailable, as on the native form.
        for (const [name, value] of Object.entries(known.headers)) reply.header(name, value);
      }
      const { status, code } = slackAnswer(known);
      return sendSlackText(reply, status, code);
    });

    slack.post<{ Params: { token: string }; Body: unknown }>(
      "/api/public/webhooks/ingest/:token/slack",
      {
        bodyLimit: INGEST_BODY_LIMIT,
        config: postConfig,
        // Documented, not enforced: like Slack, unknown fields are ignored and types are lenient.
        validatorCompiler: () => () => true,
        schema: {
          tags,
          summary: "Post a Slack incoming-webhook payload (JSON, or form-encoded payload=...)",
          description:
            "Answers like Slack: 200 `ok`, or a status with a bare code in text/plain: 400 invalid_payload, no_text, too_many_attachments, body_too_large, invalid_idempotency_key; 404 no_service (unknown or disabled token); 409 idempotency_key_in_use; 415 unsupported_media_type; 422 dlp_blocked, idempotency_key_reused; 429 rate_limited; 503 database_unavailable (with Retry-After); 507 insufficient_storage.",
          params: IngestTokenParamsSchema,
          body: SlackIngestParamsSchema,
          response: {
            200: slackText("ok"),
            400: slackText(
              "invalid_payload, no_text, too_many_attachments, body_too_large or invalid_idempotency_key",
            ),
            404: slackText("no_service: unknown or disabled token"),
            409: slackText("idempotency_key_in_use: the same Idempotency-Key is in flight"),
            415: slackText("unsupported_media_type"),
            422: slackText("dlp_blocked or idempotency_key_reused"),
            429: slackText("rate_limited"),
            503: slackText("database_unavailable: retry after the Retry-After delay"),
            507: slackText("insufficient_storage: the disk holding the database is full"),
          },
        },
      },
      async (request, reply) => {
        const target = await resolveIngestTarget(ctx, lookupHash(request));
        return answerOnce(ctx, request, reply, target, async (claim) => {
          const message = slackPayloadToMessage(readSlackPayload(request.body));
          await ingestMessage(
            ctx,
            target,
            {
              content: message.content,
              contentFormat: "markdown",
              trace: request.trace,
              ...(target.allowOverrides
                ? { displayName: message.username, avatarUrl: message.iconUrl }
                : {}),
            },
            claim && { claim, answer: () => SLACK_OK },
          );
          return SLACK_OK;
        });
      },
    );
  });
};
