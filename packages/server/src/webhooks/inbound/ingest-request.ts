import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../../app-context.js";
import { AppError } from "../../errors/app-error.js";
import { readIdempotencyKey } from "./idempotency/idempotency-key.js";
import {
  runIdempotent,
  type IdempotencyClaim,
  type IdempotencyKind,
  type KeptAnswer,
} from "./idempotency/run-idempotent.js";
import { hashIngestToken, INGEST_TOKEN_PATTERN } from "./ingest-token.js";

/**
 * What every public ingest route does with its request, whatever the payload's dialect: the
 * token's hash (rate-limit key, then lookup), the raw body bytes (idempotency, signatures), and
 * answering at most once per key.
 */

export const TOKEN_HASH = Symbol("parley.ingestTokenHash");
type IngestRequest = FastifyRequest<{ Params: { token: string } }> & {
  [TOKEN_HASH]: string | null;
};

/** SHA-256 of the path token, computed once per request (rate-limit key, then lookup). */
export function tokenHashOf(request: FastifyRequest): string {
  const ingest = request as IngestRequest;
  return (ingest[TOKEN_HASH] ??= hashIngestToken(String(ingest.params.token ?? "")));
}

/** Only a well-formed token can exist: anything else skips the database and gets the same 404. */
export function lookupHash(request: FastifyRequest): string | undefined {
  return INGEST_TOKEN_PATTERN.test((request as IngestRequest).params.token)
    ? tokenHashOf(request)
    : undefined;
}

/** The raw body bytes, kept by this scope's parsers for the idempotency check and signatures. */
export const RAW_BODY = Symbol("parley.rawBody");
type WithRawBody = { [RAW_BODY]: Buffer | null };

/** The request's body bytes as received (empty when it had none). */
export function rawBodyOf(request: FastifyRequest): Buffer {
  return (request as FastifyRequest & WithRawBody)[RAW_BODY] ?? EMPTY;
}
const EMPTY = Buffer.alloc(0);

/**
 * Registers, in `app`'s scope, a parser for `contentType` that keeps the raw bytes on the request
 * and hands `parse` their text: the idempotency check compares bytes, signatures sign bytes.
 */
export function parseKeepingRawBody(
  app: FastifyInstance,
  contentType: string,
  parse: (text: string) => unknown,
): void {
  if (app.hasContentTypeParser(contentType)) app.removeContentTypeParser(contentType);
  app.addContentTypeParser(contentType, { parseAs: "buffer" }, (request, body, done) => {
    const bytes = body as Buffer;
    (request as FastifyRequest & WithRawBody)[RAW_BODY] = bytes;
    try {
      done(null, parse(bytes.toString("utf8")));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/**
 * JSON as everywhere else (jsonOnly: an empty body is no body; bad JSON is 400 invalid_json),
 * parsed by Fastify's own parser (prototype poisoning refused).
 */
export function jsonParserOf(app: FastifyInstance): (text: string) => unknown {
  const parser = app.getDefaultJsonParser("error", "error");
  return (text) => {
    if (text.trim() === "") return undefined;
    let failure: Error | null = null;
    let value: unknown;
    parser(undefined as never, text, (error, parsed) => {
      failure = error;
      value = parsed;
    });
    if (failure)
      throw new AppError(
        "invalid_json",
        `the body is not valid JSON: ${(failure as Error).message}`,
      );
    return value;
  };
}

/** Sends a kept (or replayed) answer as it was first sent. */
export function sendKept(reply: FastifyReply, answer: KeptAnswer, replayed: boolean): FastifyReply {
  reply.code(answer.status).headers(answer.headers);
  if (replayed) reply.header("idempotent-replayed", "true");
  return answer.body === null ? reply.send() : reply.send(answer.body);
}

/** A JSON answer as kept for replay: the exact text sent. */
export function keptJson(status: number, value: unknown): KeptAnswer {
  return {
    status,
    headers: { "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify(value),
  };
}

/**
 * Answers the request through `work` at most once per key (docs/inbound-webhooks.md,
 * "Idempotency"): the sender's own event id when the route has one (`senderKey`), else the
 * Idempotency-Key header; without either, `work` simply runs (its claim undefined). `work` posts
 * with the claim it gets (ingestMessage's `once`), so the claim, the post and the kept answer are
 * one unit of work. A replay answers the first answer with `Idempotent-Replayed: true`.
 */
export async function answerOnce(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  target: { id: number },
  work: (claim: IdempotencyClaim | undefined) => Promise<KeptAnswer>,
  senderKey?: { kind: IdempotencyKind; key: string },
): Promise<FastifyReply> {
  const headerKey = readIdempotencyKey(request.headers["idempotency-key"]);
  const key = senderKey ?? (headerKey === undefined ? undefined : { kind: "key", key: headerKey });
  if (key === undefined) return sendKept(reply, await work(undefined), false);
  const { answer, replayed } = await runIdempotent(
    ctx,
    {
      inboundWebhookId: target.id,
      kind: key.kind,
      key: key.key,
      body: senderKey ? null : rawBodyOf(request),
    },
    work,
  );
  return sendKept(reply, answer, replayed);
}
