import { verify as verifyGitHubSignature } from "@octokit/webhooks-methods";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import {
  GitHubIngestParamsSchema,
  IngestResultSchema,
  IngestTokenParamsSchema,
  StripeIngestParamsSchema,
} from "@parley/client/wire";
import type { AppContext } from "../../app-context.js";
import { openSecret } from "../../config/secret-box.js";
import { AppError } from "../../errors/app-error.js";
import { problemSchema } from "../../http/schemas.js";
import type { KeptAnswer } from "./idempotency/run-idempotent.js";
import {
  ingestMessage,
  type IngestAnswer,
  type ResolvedIngestTarget,
  resolveIngestTarget,
} from "./ingest.js";
import {
  answerOnce,
  keptJson,
  lookupHash,
  parseKeepingRawBody,
  rawBodyOf,
} from "./ingest-request.js";
import { githubMessage } from "./senders/github-message.js";
import { stripeMessage } from "./senders/stripe-message.js";
import { verifyStripeSignature } from "./senders/stripe-signature.js";

/**
 * Largest GitHub or Stripe delivery: their payloads carry far more than the message shows (a push
 * lists its commits, a pull request its repository twice). Bigger ones answer 400 body_too_large.
 */
export const SENDER_BODY_LIMIT = 1024 * 1024;

function invalidSignature(header: string): AppError {
  return new AppError(
    "invalid_signature",
    `the ${header} header is missing or does not match the webhook's signing secret`,
  );
}

/**
 * The opened secret of each looked-up webhook: ingest keeps a lookup for up to a second
 * (INGEST_TARGET_TTL_MS) and hands the same object to every request meanwhile, so the secret is
 * decrypted once per lookup, not per delivery (an AES-GCM decryption costs about as much as the
 * signature check itself). A new lookup (a new or removed secret) is a new object.
 */
const openedSecrets = new WeakMap<ResolvedIngestTarget, string | null>();

/** The webhook's signing secret, opened (null when none is set). */
function signingSecretOf(ctx: AppContext, target: ResolvedIngestTarget): string | null {
  let secret = openedSecrets.get(target);
  if (secret === undefined) {
    const sealed = target.signingSecretCiphertext;
    secret = sealed === null ? null : openSecret(ctx.keys.secretKey, sealed);
    openedSecrets.set(target, secret);
  }
  return secret;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A form-encoded body (GitHub's "application/x-www-form-urlencoded" content type). */
const FORM = Symbol("parley.senderForm");
type SenderForm = { [FORM]: URLSearchParams };

/** GitHub's form content type: the JSON payload in the `payload` field. */
function githubPayload(body: unknown): Record<string, unknown> {
  let payload = body;
  if (isObject(body) && FORM in body) {
    const json = (body as SenderForm)[FORM].get("payload");
    if (json === null)
      throw new AppError("validation_failed", "the form has no payload field", {
        field: "body.payload",
      });
    try {
      payload = JSON.parse(json) as unknown;
    } catch {
      throw new AppError("invalid_json", "the payload field is not valid JSON");
    }
  }
  if (!isObject(payload))
    throw new AppError("validation_failed", "a GitHub delivery is a JSON object", {
      field: "body",
    });
  return payload;
}

/** A header that must be one value of 1..255 printable ASCII characters, if present. */
function headerValue(request: FastifyRequest, name: string, required: boolean): string | undefined {
  const value = request.headers[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string" || !/^[\x20-\x7e]{1,255}$/.test(value))
    throw new AppError("validation_failed", `the ${name} header is required`, {
      field: `headers.${name}`,
    });
  return value;
}

const NOTHING_POSTED = (headers: Record<string, string> = {}): KeptAnswer => ({
  status: 204,
  headers,
  body: null,
});

const answers = {
  200: IngestResultSchema,
  204: { type: "null", description: "nothing posted (ping, or an ignored event: Parley-Ignored)" },
  400: problemSchema,
  401: problemSchema,
  404: problemSchema,
  409: problemSchema,
  415: problemSchema,
  422: problemSchema,
  429: problemSchema,
  503: problemSchema,
  507: problemSchema,
} as const;

/**
 * GitHub and Stripe deliveries (docs/inbound-webhooks.md, "Signed senders"): checked against the
 * webhook's signing secret when it has one, deduplicated on the sender's own id, formatted into
 * one markdown message, posted through ingestMessage() like every other ingest route (content
 * rules, DLP, moderation). Registered inside the ingest routes' scope, so they share its rate
 * limit bucket and its raw-body JSON parser.
 */
export const senderRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  parseKeepingRawBody(app, "application/x-www-form-urlencoded", (text) => ({
    [FORM]: new URLSearchParams(text),
  }));
  const tags = ["inbound-webhooks"];
  const common = {
    bodyLimit: SENDER_BODY_LIMIT,
    // Third-party payloads: only the fields used are read, whatever the rest holds; the schemas
    // document the body, the handlers check what they use (after the token and the signature).
    // They post through ingestMessage(), handing the request's trace down (request-trace.ts).
    config: { nulGuard: false, handsTraceDown: true },
    validatorCompiler: () => () => true,
  };

  app.post<{ Params: { token: string }; Body: unknown }>(
    "/api/public/webhooks/ingest/:token/github",
    {
      ...common,
      schema: {
        tags,
        summary: "Post a GitHub webhook delivery (JSON or form-encoded payload=...)",
        description:
          "X-GitHub-Event names the event. With a signing secret set, X-Hub-Signature-256 must be sha256=<hex HMAC-SHA256 of the raw body> (else 401 invalid_signature). ping answers 204; push, pull_request (opened, closed, merged, reopened, ready_for_review), pull_request_review (submitted), issues (opened, closed, reopened), issue_comment (created), release (published), workflow_run (completed), create, delete, star (created) and fork post one markdown message; anything else answers 204 with Parley-Ignored: <event>.<action>. A repeated X-GitHub-Delivery answers the first answer with Idempotent-Replayed: true.",
        params: IngestTokenParamsSchema,
        body: GitHubIngestParamsSchema,
        response: answers,
      },
    },
    async (request, reply) => {
      const target = await resolveIngestTarget(ctx, lookupHash(request));
      const secret = signingSecretOf(ctx, target);
      if (secret !== null) {
        const signature = request.headers["x-hub-signature-256"];
        const body = rawBodyOf(request).toString("utf8");
        // The library throws on an empty payload or signature: those are simply not signed.
        const valid =
          typeof signature === "string" &&
          signature !== "" &&
          body !== "" &&
          (await verifyGitHubSignature(secret, body, signature).catch(() => false));
        if (!valid) throw invalidSignature("X-Hub-Signature-256");
      }
      const event = headerValue(request, "x-github-event", true)!;
      const payload = githubPayload(request.body);
      const delivery = headerValue(request, "x-github-delivery", false);
      return answerOnce(
        ctx,
        request,
        reply,
        target,
        async (claim) => {
          if (event === "ping") return NOTHING_POSTED();
          const outcome = githubMessage(event, payload);
          if (outcome.kind === "ignored") return NOTHING_POSTED({ "parley-ignored": outcome.name });
          const answer = (posted: IngestAnswer) => keptJson(200, posted);
          return answer(
            await ingestMessage(
              ctx,
              target,
              {
                content: outcome.content,
                contentFormat: "markdown",
                trace: request.trace,
                composedLinks: true,
              },
              claim && { claim, answer },
            ),
          );
        },
        delivery === undefined ? undefined : { kind: "github-delivery", key: delivery },
      );
    },
  );

  app.post<{ Params: { token: string }; Body: unknown }>(
    "/api/public/webhooks/ingest/:token/stripe",
    {
      ...common,
      schema: {
        tags,
        summary: "Post a Stripe event",
        description:
          'A Stripe event object. With a signing secret set, Stripe-Signature must be t=<unix>,v1=<hex HMAC-SHA256 of "t.body"> with t within 300 s (else 401 invalid_signature). payment_intent.succeeded, payment_intent.payment_failed, charge.refunded, charge.dispute.created, checkout.session.completed, invoice.paid, invoice.payment_failed, customer.subscription.created and customer.subscription.deleted are described with their amounts; any other type posts `Stripe event <type> (<id>)`. A repeated event id answers the first answer with Idempotent-Replayed: true.',
        params: IngestTokenParamsSchema,
        body: StripeIngestParamsSchema,
        response: answers,
      },
    },
    async (request, reply) => {
      const target = await resolveIngestTarget(ctx, lookupHash(request));
      const secret = signingSecretOf(ctx, target);
      if (secret !== null) {
        const header = request.headers["stripe-signature"];
        const signed =
          typeof header === "string" &&
          verifyStripeSignature(secret, rawBodyOf(request), header, ctx.now());
        if (!signed) throw invalidSignature("Stripe-Signature");
      }
      const event = request.body;
      if (!isObject(event) || typeof event.id !== "string" || typeof event.type !== "string")
        throw new AppError(
          "validation_failed",
          "a Stripe event is a JSON object with id and type",
          {
            field: "body",
          },
        );
      const id = event.id;
      return answerOnce(
        ctx,
        request,
        reply,
        target,
        async (claim) => {
          const answer = (posted: IngestAnswer) => keptJson(200, posted);
          return answer(
            await ingestMessage(
              ctx,
              target,
              {
                content: stripeMessage(event),
                contentFormat: "markdown",
                trace: request.trace,
                composedLinks: true,
              },
              claim && { claim, answer },
            ),
          );
        },
        { kind: "stripe-event", key: id },
      );
    },
  );
};
