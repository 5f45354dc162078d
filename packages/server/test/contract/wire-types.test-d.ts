/**
 * Type tests (vitest typecheck, and `npm run typecheck`): the client's types are the static types
 * of the schemas the server registers (WIRE_ROUTES, held to the server by wire-routes.test.ts),
 * and the server's views are the client's types. A shape changed on one side only fails here.
 */
import type {
  DeliveryAttempt,
  DeliveryDetail,
  DeliverySummary,
  InboundWebhook,
  InboundWebhookWithToken,
  IngestResult,
  Message,
  ModerationFlag,
  Page,
  Room,
  Route,
  Routes,
  StoredMessage,
  UploadedFile,
  User,
  Webhook,
} from "@parley/client";
import type { Static, TSchema } from "@sinclair/typebox";
import { describe, expectTypeOf, it } from "vitest";
import type { FileView } from "../../src/chat/upload-file.js";
import type { MessageRepresentation, MessageView } from "../../src/chat/messages-service.js";
import type { RoomView } from "../../src/chat/rooms-service.js";
import type { UserView } from "../../src/chat/users-service.js";
import type { Page as ServerPage } from "../../src/http/pagination.js";
import type { ModerationFlagView } from "../../src/moderation-queue/moderation-review.js";
import type {
  InboundWebhookView,
  InboundWebhookWithToken as ServerInboundWebhookWithToken,
} from "../../src/webhooks/inbound/inbound-service.js";
import type { IngestAnswer } from "../../src/webhooks/inbound/ingest.js";
import type {
  AttemptView,
  DeliveryDetail as ServerDeliveryDetail,
  DeliverySummary as ServerDeliverySummary,
  WebhookView,
} from "../../src/webhooks/outbound/admin-api/webhook-views.js";
import type { WireRoutes } from "./wire-routes.js";

/** True when A and B are the same type (not merely assignable either way). */
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** One object type for an intersection, so it compares equal to the same keys written out. */
type Flatten<T> = { [K in keyof T]: T[K] };
type StaticOf<S> = S extends TSchema ? Static<S> : unknown;

/** What the client receives from the route: nothing for 204, text, or the answer's static type. */
type ServerAnswer<W> = W extends { status: 204 }
  ? undefined
  : W extends { response: "text" }
    ? string
    : W extends { response: "binary" }
      ? ArrayBuffer
      : W extends { response: infer S }
        ? StaticOf<S>
        : never;

type BodyParams<W> = W extends { body: "multipart" }
  ? { data: FormData }
  : W extends { body: infer S; bodyAsData: true }
    ? { data: StaticOf<S> }
    : W extends { body: infer S }
      ? StaticOf<S>
      : unknown;

/** The client's one parameter object: path placeholders, query and body keys together. */
type ServerParams<W> = Flatten<
  (W extends { params: infer S } ? StaticOf<S> : unknown) &
    (W extends { querystring: infer S } ? StaticOf<S> : unknown) &
    BodyParams<W>
>;

type ApiRoute = keyof WireRoutes;
/** Routes whose client answer or parameters are not exactly the wire's. */
type AnswerDrift = {
  [R in ApiRoute]: Equal<ServerAnswer<WireRoutes[R]>, Routes[R]["response"]> extends true
    ? never
    : R;
}[ApiRoute];
type ParamsDrift = {
  [R in ApiRoute]: Equal<ServerParams<WireRoutes[R]>, Flatten<Routes[R]["params"]>> extends true
    ? never
    : R;
}[ApiRoute];

/** `true` when no route drifted; else the drifted routes, so a failure names them. */
type NoneOf<R> = [R] extends [never] ? true : R;

/** Posting and listing answer messages as stored; the client types them as `Message`. */
type StoredMessageRoutes = "POST /api/rooms/{roomId}/messages" | "GET /api/rooms/{roomId}/messages";

describe("the client's route map and the server's wire schemas", () => {
  it("covers the same API routes", () => {
    expectTypeOf<ApiRoute>().toEqualTypeOf<
      Exclude<Route, "GET /healthz" | "GET /readyz" | "GET /metrics" | "GET /openapi.json">
    >();
  });

  it("types every answer as the schema the server answers with", () => {
    const drifted: NoneOf<Exclude<AnswerDrift, StoredMessageRoutes>> = true;
    void drifted;
    // Those two answer the stored message, whose fields `Message` has, without the
    // representation fields (contentRaw, contentText, contentHtml) that only a fetch adds.
    expectTypeOf<
      ServerAnswer<WireRoutes["POST /api/rooms/{roomId}/messages"]>
    >().toEqualTypeOf<StoredMessage>();
    expectTypeOf<StoredMessage>().toExtend<Message>();
    expectTypeOf<Required<Omit<Message, keyof StoredMessage>>>().toEqualTypeOf<{
      contentRaw: string;
      contentText: string;
      contentHtml: string;
    }>();
  });

  it("types every route's parameters as the schemas the server validates", () => {
    const drifted: NoneOf<ParamsDrift> = true;
    void drifted;
  });
});

describe("the server's views", () => {
  it("are the client's types", () => {
    expectTypeOf<UserView>().toEqualTypeOf<User>();
    expectTypeOf<RoomView>().toEqualTypeOf<Room>();
    expectTypeOf<MessageView>().toEqualTypeOf<StoredMessage>();
    expectTypeOf<MessageRepresentation>().toEqualTypeOf<Message>();
    expectTypeOf<FileView>().toEqualTypeOf<UploadedFile>();
    expectTypeOf<ModerationFlagView>().toEqualTypeOf<ModerationFlag>();
    expectTypeOf<WebhookView>().toEqualTypeOf<Webhook>();
    expectTypeOf<ServerDeliverySummary>().toEqualTypeOf<DeliverySummary>();
    expectTypeOf<ServerDeliveryDetail>().toEqualTypeOf<DeliveryDetail>();
    expectTypeOf<AttemptView>().toEqualTypeOf<DeliveryAttempt>();
    expectTypeOf<InboundWebhookView>().toEqualTypeOf<InboundWebhook>();
    expectTypeOf<ServerInboundWebhookWithToken>().toEqualTypeOf<InboundWebhookWithToken>();
    expectTypeOf<IngestAnswer>().toEqualTypeOf<IngestResult>();
    expectTypeOf<ServerPage<User>>().toEqualTypeOf<Page<User>>();
  });
});
