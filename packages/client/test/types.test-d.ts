import { describe, expectTypeOf, it } from "vitest";
import {
  paginate,
  request,
  type DeliveryDetail,
  type DeliverySummary,
  type InboundWebhookWithToken,
  type IngestResult,
  type Message,
  type Page,
  type ParleyResponse,
  type RequestInterface,
  type User,
  type FastifyWebhooksOptions,
  type VerifySignatureHeadersOptions,
  type WebhookHandlerOptions,
  type WebhookMiddlewareOptions,
  type WebhookRequestInput,
  type WebhookSignatureScheme,
  DEFAULT_SIGNATURE_SCHEMES,
  type VerifyWebhookOptions,
  type Webhook,
  verifyAndParseWebhook,
  verifyParleySignature,
  verifySignatureHeaders,
  verifyWebhook,
  verifyWebhookRequest,
  verifyWebhookSignature,
} from "../src/index.js";

// Type-checked only, by vitest's typecheck (npm test) and by npm run typecheck: nothing here runs.

describe("typed routes", () => {
  it("types the answer of a known route", () => {
    expectTypeOf(
      request("POST /api/admin/webhooks", {
        data: {
          name: "ops",
          url: "https://hooks.example.com/parley",
          secret: "s".repeat(32),
          events: ["MESSAGE_CREATED"],
        },
      }),
    ).toEqualTypeOf<Promise<ParleyResponse<Webhook>>>();
    expectTypeOf(request("GET /api/admin/webhooks")).toEqualTypeOf<
      Promise<ParleyResponse<Page<Webhook>>>
    >();
    expectTypeOf(
      request("GET /api/admin/webhooks/{id}/deliveries/{deliveryId}", { id: 1, deliveryId: 2 }),
    ).toEqualTypeOf<Promise<ParleyResponse<DeliveryDetail>>>();
    expectTypeOf(request("DELETE /api/admin/webhooks/{id}", { id: 1 })).toEqualTypeOf<
      Promise<ParleyResponse<undefined>>
    >();
    expectTypeOf(
      request("POST /api/admin/inbound-webhooks", { roomId: 1, displayName: "CI" }),
    ).toEqualTypeOf<Promise<ParleyResponse<InboundWebhookWithToken>>>();
    expectTypeOf(
      request("POST /api/public/webhooks/ingest/{token}", { token: "t", content: "hi" }),
    ).toEqualTypeOf<Promise<ParleyResponse<IngestResult>>>();
    expectTypeOf(
      request("GET /api/rooms/{roomId}/messages/{messageId}", {
        roomId: 1,
        messageId: 2,
        mediaType: { format: "full+json" },
      }),
    ).toEqualTypeOf<Promise<ParleyResponse<Message>>>();
    expectTypeOf(request("GET /metrics")).toEqualTypeOf<Promise<ParleyResponse<string>>>();
  });

  it("checks the parameters of a known route", () => {
    // @ts-expect-error url, secret and events are required
    void request("POST /api/admin/webhooks", { data: { name: "ops" } });
    void request("POST /api/admin/webhooks", {
      // @ts-expect-error a webhook's url would be taken as the request's url: it goes in data
      name: "o",
      url: "u",
      secret: "s",
      events: ["MESSAGE_CREATED"],
    });
    void request("POST /api/admin/webhooks", {
      // @ts-expect-error an unknown event name
      data: { name: "o", url: "u", secret: "s", events: ["NOPE"] },
    });
    // @ts-expect-error a typo is an excess property, not a silent extra body key
    void request("POST /api/admin/users", { username: "a", role: "user", rol: "admin" });
    // @ts-expect-error a typo inside data too
    void request("PATCH /api/admin/webhooks/{id}", { id: 1, data: { enabeld: false } });
    // @ts-expect-error ids are numbers
    void request("GET /api/admin/webhooks/{id}", { id: "1" });
    // @ts-expect-error the route has a required placeholder, so params are required
    void request("GET /api/admin/webhooks/{id}");
    void request("POST /api/rooms/{roomId}/messages", {
      roomId: 1,
      content: "x",
      // @ts-expect-error contentFormat is markdown or html
      contentFormat: "md",
    });
    // Common options go with any route.
    void request("GET /api/admin/users", {
      limit: 10,
      headers: { authorization: "Bearer x" },
      request: { timeout: 1000 },
    });
  });

  it("still takes any other route, loosely typed", () => {
    expectTypeOf(request("GET /api/v9/anything", { whatever: [1, 2] })).toEqualTypeOf<
      Promise<ParleyResponse<unknown>>
    >();
    expectTypeOf(request("GET /api/v9/anything")).toEqualTypeOf<Promise<ParleyResponse<unknown>>>();
  });

  it("keeps route types through .defaults()", () => {
    const api = request.defaults({
      baseUrl: "http://127.0.0.1:1",
      headers: { authorization: "x" },
    });
    expectTypeOf(api).toExtend<RequestInterface>();
    expectTypeOf(api.endpoint.DEFAULTS.baseUrl).toEqualTypeOf<string>();
    expectTypeOf(api("GET /api/admin/users/{id}", { id: 1 })).toEqualTypeOf<
      Promise<ParleyResponse<User>>
    >();
  });

  it("types paginate by the route's item type", () => {
    expectTypeOf(paginate.all(request, "GET /api/admin/users")).toEqualTypeOf<Promise<User[]>>();
    expectTypeOf(
      paginate.items(request, "GET /api/admin/webhooks/{id}/deliveries", {
        id: 1,
        status: "FAILED",
      }),
    ).toEqualTypeOf<AsyncGenerator<DeliverySummary, void, undefined>>();
    expectTypeOf(paginate(request, "GET /api/admin/webhooks")).toEqualTypeOf<
      AsyncGenerator<Page<Webhook>, void, undefined>
    >();
    expectTypeOf(paginate.all(request, "GET /somewhere/else")).toEqualTypeOf<Promise<unknown[]>>();
    // @ts-expect-error the deliveries list needs its webhook id
    void paginate.all(request, "GET /api/admin/webhooks/{id}/deliveries");
  });
});

describe("webhook verification", () => {
  it("keeps the 1.0 names as aliases of the same types", () => {
    expectTypeOf(verifyWebhookSignature).toEqualTypeOf(verifyParleySignature);
    expectTypeOf(verifyWebhook).toEqualTypeOf(verifySignatureHeaders);
    expectTypeOf(verifyWebhookRequest).toEqualTypeOf(verifyAndParseWebhook);
    expectTypeOf<VerifyWebhookOptions>().toEqualTypeOf<VerifySignatureHeadersOptions>();
  });

  it("types what each one answers", () => {
    expectTypeOf(verifyParleySignature("s", "{}", undefined)).toEqualTypeOf<boolean>();
    expectTypeOf(
      verifySignatureHeaders({ secret: "s", rawBody: "{}", headers: {} }).ok,
    ).toEqualTypeOf<boolean>();
    const verified = verifyAndParseWebhook({ secret: "s", rawBody: "{}", signature: undefined });
    if (verified.ok) expectTypeOf(verified.event.event).toBeString();
    else expectTypeOf(verified.status).toEqualTypeOf<400 | 401>();
  });

  it("takes the schemes a receiver accepts, by name", () => {
    expectTypeOf<VerifySignatureHeadersOptions["schemes"]>().toEqualTypeOf<
      readonly WebhookSignatureScheme[] | undefined
    >();
    expectTypeOf<WebhookRequestInput["schemes"]>().toEqualTypeOf<
      VerifySignatureHeadersOptions["schemes"]
    >();
    expectTypeOf<WebhookHandlerOptions["schemes"]>().toEqualTypeOf<
      VerifySignatureHeadersOptions["schemes"]
    >();
    expectTypeOf<WebhookMiddlewareOptions["schemes"]>().toEqualTypeOf<
      VerifySignatureHeadersOptions["schemes"]
    >();
    expectTypeOf<FastifyWebhooksOptions["schemes"]>().toEqualTypeOf<
      VerifySignatureHeadersOptions["schemes"]
    >();
    expectTypeOf(DEFAULT_SIGNATURE_SCHEMES).toEqualTypeOf<readonly WebhookSignatureScheme[]>();
    void verifySignatureHeaders({
      secret: "s",
      rawBody: "{}",
      headers: {},
      // @ts-expect-error "both" is an endpoint's setting; a receiver lists the schemes it accepts
      schemes: ["both"],
    });
  });
});
