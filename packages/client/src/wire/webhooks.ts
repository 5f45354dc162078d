/** Outbound webhooks (admin; Enterprise): endpoints and their delivery log. */
import { Type, type Static } from "@sinclair/typebox";
import {
  EVENT_NAMES,
  WEBHOOK_TEST,
  WEBHOOK_VERIFICATION,
  type EventName,
  type WebhookEvent,
} from "../types/events.js";
import { Id, listQueryProperties, Nullable, StringEnum, Timestamp } from "./common.js";
import {
  EndpointAuthParamsSchema,
  EndpointAuthSchema,
  EndpointTlsParamsSchema,
  EndpointTlsSchema,
} from "./endpoint-credentials.js";

/** An event name, "*" (every event, later ones included) or a prefix wildcard ("MESSAGE_*"). */
export type EventSubscription = EventName | "*" | `${string}_*`;

export const SIGNATURE_SCHEMES = [
  "parley",
  "standard-webhooks",
  "both",
  "standard-webhooks-ed25519",
] as const;
/**
 * parley: X-Webhook-Signature-256 only (default); standard-webhooks: webhook-* only (HMAC, `v1,`);
 * both; standard-webhooks-ed25519: webhook-* only, signed with the endpoint's ed25519 key (`v1a,`).
 */
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

export const ENDPOINT_STATES = ["enabled", "failing", "disabled"] as const;
/** What an endpoint is doing: see the Webhook object's `state`. */
export type EndpointState = (typeof ENDPOINT_STATES)[number];

export const ORDERINGS = ["none", "room", "endpoint"] as const;
/**
 * none (default): no order kept; room: the events of one room in commit order, one attempt in
 * flight per (endpoint, room), events without a room forming one lane; endpoint: one lane.
 */
export type Ordering = (typeof ORDERINGS)[number];

export const VERIFICATIONS = ["not_required", "pending", "verified"] as const;
/**
 * The ownership check (PARLEY_WEBHOOK_VERIFY_OWNERSHIP): pending (nothing is sent but the
 * WEBHOOK_VERIFICATION challenge until the receiver echoes it), verified, or not_required.
 */
export type Verification = (typeof VERIFICATIONS)[number];

/** An ordered lane held by its failing head (at most 20 are shown). */
export const HeldLaneSchema = Type.Object(
  {
    /** The lane's room; null for the lane of events without a room (and for "endpoint"). */
    roomId: Nullable(Id()),
    /** The failing delivery at the head of the lane: nothing behind it goes until it ends. */
    deliveryId: Id(),
    /** When the head's first attempt started: the lane has been held since. */
    since: Timestamp(),
  },
  { additionalProperties: false },
);
export type HeldLane = Static<typeof HeldLaneSchema>;
export const PAYLOAD_FORMATS = ["parley", "cloudevents", "cloudevents-binary"] as const;
/**
 * parley: Parley's envelope (default); cloudevents: CloudEvents 1.0 structured mode
 * (application/cloudevents+json); cloudevents-binary: the event's data as the body, its
 * attributes as ce-* headers.
 */
export type PayloadFormat = (typeof PAYLOAD_FORMATS)[number];

const Headers = (description: string) =>
  Type.Unsafe<Record<string, string>>({
    type: "object",
    additionalProperties: { type: "string" },
    description,
  });

/** An endpoint's attempts of the last 24 hours and its current run of failures. */
export const EndpointHealthSchema = Type.Object(
  {
    attempts24h: Type.Integer(),
    /** 0..1; null without attempts. */
    successRate24h: Nullable(Type.Number(), { description: "0..1; null without attempts." }),
    p50LatencyMs24h: Nullable(Type.Integer()),
    p95LatencyMs24h: Nullable(Type.Integer()),
    lastSuccessAt: Nullable(Timestamp()),
    lastFailureAt: Nullable(Timestamp()),
    lastError: Nullable(Type.String()),
    /** The current run of failed attempts; 0 after a success. */
    consecutiveFailures: Type.Integer(),
    /** When the current run of failed attempts began; null after a success. */
    failingSince: Nullable(Timestamp(), {
      description: "When the current run of failed attempts began; null after a success.",
    }),
    /**
     * The circuit breaker, as last changed by a process sending to the endpoint: closed (sending),
     * open (time-outs or connection failures in a row: nothing is sent until a probe may go),
     * half-open (one delivery goes as a probe; an answer closes it).
     */
    circuit: StringEnum(["closed", "open", "half-open"] as const),
  },
  { additionalProperties: false },
);
export type EndpointHealth = Static<typeof EndpointHealthSchema>;

/** An outbound endpoint. Its secret is never returned. */
export const WebhookSchema = Type.Object(
  {
    id: Id(),
    name: Type.String(),
    url: Type.String(),
    events: Type.Unsafe<EventSubscription[]>({ type: "array", items: { type: "string" } }),
    enabled: Type.Boolean(),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    signatureScheme: StringEnum(SIGNATURE_SCHEMES),
    payloadFormat: StringEnum(PAYLOAD_FORMATS),
    traceContext: Type.Boolean(),
    roomIds: Type.Unsafe<number[] | null>({ type: ["array", "null"], items: { type: "integer" } }),
    /** Extra request headers, values masked but for their last 4 characters. */
    headers: Headers("Extra request headers, values masked but for their last 4 characters."),
    maxDeliveriesPerSecond: Nullable(Type.Integer()),
    disabledReason: Type.Unsafe<"manual" | "auto_failing" | "gone" | null>({
      type: ["string", "null"],
      enum: [null, "manual", "auto_failing", "gone"],
    }),
    disabledAt: Nullable(Timestamp()),
    /**
     * enabled: sending, its last attempt succeeded (or none yet); failing: enabled, but its last
     * attempt failed (see autoDisableAt); disabled: not sending (see disabledReason).
     */
    state: StringEnum(ENDPOINT_STATES, {
      description:
        "enabled: sending, its last attempt succeeded (or none yet); failing: enabled, its last attempt failed (see autoDisableAt); disabled: not sending (see disabledReason and disabledBy).",
    }),
    /**
     * While failing: when the auto-disable rule disables it if nothing succeeds (at its first
     * failed attempt from then on, once failuresToAutoDisable more have failed); null when not
     * failing or when the rule is off.
     */
    autoDisableAt: Nullable(Timestamp(), {
      description:
        "While failing: the time from which its next failed attempt disables it, if nothing succeeds before (once failuresToAutoDisable more attempts have failed). Null when not failing or the rule is off.",
    }),
    /** While failing: how many more failed attempts in a row the rule needs (0: none); else null. */
    failuresToAutoDisable: Nullable(Type.Integer({ minimum: 0 }), {
      description:
        "While failing: how many more failed attempts in a row the auto-disable rule needs (0: none); else null.",
    }),
    /** The attempt whose failure disabled it (410 Gone, or the rule); null for a manual disable. */
    disabledBy: Type.Union(
      [
        Type.Object({ deliveryId: Id(), attempt: Type.Integer() }, { additionalProperties: false }),
        Type.Null(),
      ],
      { description: "The attempt whose failure disabled it; null unless Parley disabled it." },
    ),
    health: EndpointHealthSchema,
    ordering: StringEnum(ORDERINGS),
    /** Lanes whose head is failing, oldest first (at most 20); [] without ordering. */
    heldLanes: Type.Array(HeldLaneSchema, { maxItems: 20 }),
    /** How Parley authenticates to the receiver; write-only parts masked. */
    auth: EndpointAuthSchema,
    /** The client certificate for mutual TLS: its subject and expiry. */
    tls: EndpointTlsSchema,
    /**
     * `whpk_` + base64 of the endpoint's ed25519 public key (standard-webhooks-ed25519): what
     * receivers verify `v1a` signatures with. Null until the endpoint first uses that scheme.
     */
    publicKey: Nullable(
      Type.String({
        description:
          "whpk_ + base64 of the endpoint's ed25519 public key, for verifying v1a signatures; null until the endpoint first uses standard-webhooks-ed25519. The private key is never shown.",
      }),
    ),
    /** The ownership check: pending endpoints get no deliveries until their receiver answers it. */
    verification: StringEnum(VERIFICATIONS, {
      description:
        "not_required, pending (no deliveries but the WEBHOOK_VERIFICATION challenge until the receiver echoes it) or verified.",
    }),
  },
  { additionalProperties: false },
);
/** An outbound endpoint. Its secret is never returned. */
export type Webhook = Static<typeof WebhookSchema>;

/** The endpoints list's query string; unknown parameters are refused. */
export const ListWebhooksParamsSchema = Type.Object(listQueryProperties, {
  additionalProperties: false,
});
export type ListWebhooksParams = Static<typeof ListWebhooksParamsSchema>;

// Types only: lengths, URL rules and event names are checked by the server after the schema, so
// each failure answers its own code (invalid_name, invalid_url, ...) rather than validation_failed.
const endpointFields = {
  /** 1..200 characters. */
  name: Type.String({ description: "1 to 200 characters." }),
  /** Absolute https:// URL (http:// only when the server allows it). */
  url: Type.String({
    description: "Absolute https:// URL; not a loopback, private, link-local or metadata address.",
  }),
  /** 16..1024 characters; the HMAC-SHA256 key. Required but for standard-webhooks-ed25519. */
  secret: Type.Optional(
    Type.String({
      description:
        "16 to 1024 characters; the HMAC-SHA256 key. One starting with whsec_ must be whsec_ + strict base64 of a 24 to 64 byte key. Required unless signatureScheme is standard-webhooks-ed25519 (which signs with a key pair Parley generates). Write-only: never returned.",
    }),
  ),
  /** Non-empty, no duplicates; names, "*" or prefix wildcards such as "MESSAGE_*". */
  events: Type.Unsafe<EventSubscription[]>({
    type: "array",
    items: { type: "string" },
    description: `A non-empty list, without duplicates, of: ${EVENT_NAMES.join(", ")}; or "*" (every event, later ones included) or a prefix wildcard such as "MESSAGE_*".`,
  }),
  enabled: Type.Optional(
    Type.Boolean({ description: "Default true. A disabled endpoint gets no new deliveries." }),
  ),
  /** Default "parley": `X-Webhook-Signature-256` only. */
  signatureScheme: Type.Optional(
    StringEnum(SIGNATURE_SCHEMES, {
      description:
        "parley (default): X-Webhook-Signature-256 only; standard-webhooks: webhook-id, webhook-timestamp and webhook-signature (v1, HMAC) only; both; standard-webhooks-ed25519: the webhook-* headers signed v1a with the endpoint's ed25519 key pair (its public key is publicKey).",
    }),
  ),
  /** Default "parley". */
  payloadFormat: Type.Optional(
    StringEnum(PAYLOAD_FORMATS, {
      description:
        "parley (default): Parley's envelope; cloudevents: CloudEvents 1.0 structured mode (application/cloudevents+json); cloudevents-binary: the event's data as the body and its attributes as ce-* headers. Every signature scheme signs the body as sent.",
    }),
  ),
  /** Default false. */
  traceContext: Type.Optional(
    Type.Boolean({
      description:
        "Default false. When true, each attempt carries a W3C traceparent (and tracestate) continuing the trace of the request that caused the event.",
    }),
  ),
  /** null (default): every room; else only events of these rooms (events without a roomId pass). */
  roomIds: Type.Optional(
    Type.Unsafe<number[] | null>({
      type: ["array", "null"],
      items: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      maxItems: 1000,
      description:
        "null (default) or a non-empty list: events carrying a roomId are delivered only for these rooms.",
    }),
  ),
  /** Up to 10; replaces the whole set; null or {} clears it. */
  headers: Type.Optional(
    Type.Unsafe<Record<string, string> | null>({
      type: ["object", "null"],
      additionalProperties: { type: "string" },
      description:
        "Up to 10 extra request headers; replaces the whole set (null or {} clears it). Reserved names answer 400 header_reserved.",
    }),
  ),
  /** 1..10000, or null (default) for no cap. */
  maxDeliveriesPerSecond: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 1,
        maximum: 10000,
        description:
          "null (default) or a cap on attempts per second to this endpoint, all processes together.",
      }),
    ),
  ),
  /** Default "none". */
  ordering: Type.Optional(
    StringEnum(ORDERINGS, {
      description:
        "none (default); room: the events of one room in commit order, one attempt in flight per (endpoint, room), events without a room in one lane of their own; endpoint: one lane for the whole endpoint. A failing delivery holds its lane until it succeeds or is exhausted.",
    }),
  ),
  /** null (default): no Authorization header; basic, bearer or OAuth 2.0 client credentials. */
  auth: Type.Optional(EndpointAuthParamsSchema),
  /** null (default): no client certificate. */
  tls: Type.Optional(EndpointTlsParamsSchema),
};

export const CreateWebhookParamsSchema = Type.Object(endpointFields, {
  additionalProperties: false,
});
export type CreateWebhookParams = Static<typeof CreateWebhookParamsSchema>;

export const UpdateWebhookParamsSchema = Type.Partial(CreateWebhookParamsSchema);
export type UpdateWebhookParams = Static<typeof UpdateWebhookParamsSchema>;

export const DELIVERY_STATUSES = ["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"] as const;
export const DeliveryStatusSchema = StringEnum(DELIVERY_STATUSES);
export type DeliveryStatus = Static<typeof DeliveryStatusSchema>;

/** Every value a delivery's `event` can take: the subscribable events, the test and the check. */
export const DeliverableEventSchema = StringEnum([
  ...EVENT_NAMES,
  WEBHOOK_TEST,
  WEBHOOK_VERIFICATION,
] as const);

const summaryProperties = {
  id: Id(),
  webhookId: Id(),
  event: DeliverableEventSchema,
  status: DeliveryStatusSchema,
  attempts: Type.Integer(),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
  /** When the next attempt is due; null once SUCCESS or EXHAUSTED. */
  nextAttemptAt: Nullable(Timestamp(), { description: "Null once SUCCESS or EXHAUSTED." }),
  lastResponseStatus: Nullable(Type.Integer()),
  /** evt_ + 26 characters: the same on every attempt, redelivery and recovery. */
  eventId: Type.String({
    description: "evt_ + 26 characters; the same on every attempt, redelivery and recovery.",
  }),
  /**
   * PENDING or FAILED, and waiting for its endpoint to be enabled again: nothing is attempted
   * meanwhile (nextAttemptAt may be past). A WEBHOOK_TEST delivery is never held.
   */
  held: Type.Boolean({
    description:
      "PENDING or FAILED and waiting for its disabled endpoint to be enabled: no attempt is made meanwhile. WEBHOOK_TEST deliveries are never held.",
  }),
  /** The attempts a delivery gets before it is EXHAUSTED (PARLEY_WEBHOOK_MAX_ATTEMPTS). */
  maxAttempts: Type.Integer({
    description: "Attempts a delivery gets before it is EXHAUSTED (PARLEY_WEBHOOK_MAX_ATTEMPTS).",
  }),
  /** The delivery this one repeats (a redelivery or a recovery's copy); null for an original. */
  redeliveryOf: Nullable(Id(), {
    description: "The delivery this one repeats (redelivery, recovery); null for an original.",
  }),
};

export const DeliverySummarySchema = Type.Object(summaryProperties, {
  additionalProperties: false,
});
export type DeliverySummary = Static<typeof DeliverySummarySchema>;

export const DeliveryAttemptSchema = Type.Object(
  {
    attempt: Type.Integer(),
    startedAt: Timestamp(),
    durationMs: Type.Integer(),
    responseStatus: Nullable(Type.Integer()),
    /** The first 2048 bytes of the receiver's answer, decoded as UTF-8. */
    responseBody: Nullable(Type.String(), { description: "The first 2048 bytes of the answer." }),
    error: Nullable(Type.String()),
    /** As sent (custom header values masked); null for attempts from before Parley kept them. */
    requestHeaders: Type.Unsafe<Record<string, string> | null>({
      type: ["object", "null"],
      additionalProperties: { type: "string" },
      description: "As sent (custom header values masked).",
    }),
    /** At most 20, values cut to 256 characters. */
    responseHeaders: Type.Unsafe<Record<string, string> | null>({
      type: ["object", "null"],
      additionalProperties: { type: "string" },
      description: "At most 20, values cut to 256 characters.",
    }),
  },
  { additionalProperties: false },
);
export type DeliveryAttempt = Static<typeof DeliveryAttemptSchema>;

export const DeliveryDetailSchema = Type.Object(
  {
    ...summaryProperties,
    /** The envelope exactly as queued, parsed. */
    payload: Type.Unsafe<WebhookEvent>({
      type: "object",
      additionalProperties: true,
      description: "The envelope {event, timestamp, webhookId, data} exactly as queued.",
    }),
    attemptHistory: Type.Array(DeliveryAttemptSchema),
    /** The endpoint's name and URL, as they are now. */
    webhookName: Type.String(),
    webhookUrl: Type.String(),
    /** Deliveries that repeat this one (redeliveries, recoveries), oldest first (at most 20). */
    redeliveries: Type.Array(
      Type.Object(
        { id: Id(), status: DeliveryStatusSchema, createdAt: Timestamp() },
        { additionalProperties: false },
      ),
      {
        maxItems: 20,
        description: "Deliveries that repeat this one (redeliveries, recoveries), oldest first.",
      },
    ),
  },
  { additionalProperties: false },
);
export type DeliveryDetail = Static<typeof DeliveryDetailSchema>;

export const ListDeliveriesParamsSchema = Type.Object(
  {
    status: Type.Optional(DeliveryStatusSchema),
    event: Type.Optional(DeliverableEventSchema),
    ...listQueryProperties,
  },
  { additionalProperties: false },
);
export type ListDeliveriesParams = Static<typeof ListDeliveriesParamsSchema>;

/** `POST .../test`: which event of the catalogue to send, with its sample data. */
export const TestWebhookParamsSchema = Type.Object(
  {
    /** Default WEBHOOK_TEST. Any other event is sent with its catalogue sample as `data`. */
    event: Type.Optional(
      StringEnum([...EVENT_NAMES, WEBHOOK_TEST] as const, {
        description:
          "Default WEBHOOK_TEST. Any event of the catalogue (GET /api/admin/webhooks/event-types), sent with its sample as data.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type TestWebhookParams = Static<typeof TestWebhookParamsSchema>;

export const QueuedDeliverySchema = Type.Object(
  {
    deliveryId: Id(),
    status: StringEnum(["PENDING"]),
    /**
     * True when it waits: for the endpoint to be enabled (a sample of another event than
     * WEBHOOK_TEST to a disabled endpoint; WEBHOOK_TEST goes out regardless), or for its
     * ownership check to pass (any test; never the challenge itself).
     */
    held: Type.Boolean({
      description:
        "True when it waits for the disabled endpoint to be enabled (a sample of another event than WEBHOOK_TEST), or for the endpoint's ownership check (verification pending).",
    }),
  },
  { additionalProperties: false },
);
export type QueuedDelivery = Static<typeof QueuedDeliverySchema>;

export const RedeliverySchema = Type.Object({ deliveryId: Id() }, { additionalProperties: false });
export type Redelivery = Static<typeof RedeliverySchema>;

export const RotateSecretParamsSchema = Type.Object(
  {
    /** Default: a generated `whsec_` secret. */
    secret: Type.Optional(
      Type.String({
        description:
          "16 to 1024 characters (a whsec_ one, strict base64 of a 24 to 64 byte key); default a generated whsec_ secret.",
      }),
    ),
    /** 0..604800, default 86400: how long the old secret keeps signing too. */
    overlapSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 604800, default: 86400 })),
  },
  { additionalProperties: false },
);
export type RotateSecretParams = Static<typeof RotateSecretParamsSchema>;

export const RotatedSecretSchema = Type.Union([
  Type.Object(
    {
      /** Shown only in this answer. */
      secret: Type.String({ description: "Shown only in this answer." }),
      previousSecretExpiresAt: Nullable(Timestamp()),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      /** A standard-webhooks-ed25519 endpoint's new public key. */
      publicKey: Type.String({ description: "The new public key (whpk_ + base64)." }),
      /** Until then the old private key signs too (a second v1a entry). */
      previousKeyExpiresAt: Nullable(Timestamp()),
    },
    { additionalProperties: false },
  ),
]);
export type RotatedSecret = Static<typeof RotatedSecretSchema>;

export const RecoverParamsSchema = Type.Object(
  {
    since: Timestamp(),
    until: Type.Optional(Timestamp()),
    /** Default ["EXHAUSTED"]. */
    statuses: Type.Optional(
      Type.Array(StringEnum(["FAILED", "EXHAUSTED"] as const), {
        minItems: 1,
        description: 'Default ["EXHAUSTED"].',
      }),
    ),
    /** Answer how many would be queued, and queue nothing. */
    dryRun: Type.Optional(
      Type.Boolean({ description: "Answer how many would be queued, and queue nothing." }),
    ),
  },
  { additionalProperties: false },
);
export type RecoverParams = Static<typeof RecoverParamsSchema>;

export const ReplayMissingParamsSchema = Type.Object(
  {
    /** Events from this time on (kept as long as deliveries: PARLEY_DELIVERY_RETENTION_DAYS). */
    since: Timestamp({ description: "Events from this time on." }),
    /** Events before this time; default now. */
    until: Type.Optional(Timestamp({ description: "Events before this time; default now." })),
    /** Answer how many would be queued, and queue nothing (the count to confirm). */
    dryRun: Type.Optional(
      Type.Boolean({
        description: "Answer how many would be queued (queued), and queue nothing.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ReplayMissingParams = Static<typeof ReplayMissingParamsSchema>;

export const RecoveredSchema = Type.Object(
  { queued: Type.Integer() },
  { additionalProperties: false },
);
export type Recovered = Static<typeof RecoveredSchema>;

export const SearchDeliveriesParamsSchema = Type.Object(
  {
    webhookId: Type.Optional(Id()),
    status: Type.Optional(DeliveryStatusSchema),
    event: Type.Optional(DeliverableEventSchema),
    eventId: Type.Optional(Type.String({ maxLength: 64 })),
    roomId: Type.Optional(Id()),
    messageId: Type.Optional(Id()),
    /** Queued at or after. */
    since: Type.Optional(Timestamp({ description: "queued at or after" })),
    /** Queued before. */
    until: Type.Optional(Timestamp({ description: "queued before" })),
    ...listQueryProperties,
  },
  { additionalProperties: false },
);
export type SearchDeliveriesParams = Static<typeof SearchDeliveriesParamsSchema>;

export const DeliverySearchItemSchema = Type.Object(
  { ...summaryProperties, webhookName: Type.String() },
  { additionalProperties: false },
);
export type DeliverySearchItem = Static<typeof DeliverySearchItemSchema>;

export const EventTypeSchema = Type.Object(
  {
    name: DeliverableEventSchema,
    description: Type.String(),
    /** A complete sample envelope. */
    sample: Type.Unsafe<WebhookEvent>({
      type: "object",
      additionalProperties: true,
      description: "A complete envelope {event, timestamp, webhookId, data}.",
    }),
    /** The same event as the CloudEvents payload formats send it. */
    samples: Type.Object(
      {
        cloudevents: Type.Record(Type.String(), Type.Unknown(), {
          description: "payloadFormat cloudevents: the body (application/cloudevents+json).",
        }),
        cloudeventsBinary: Type.Object(
          {
            headers: Type.Record(Type.String(), Type.String()),
            body: Type.Unknown(),
          },
          {
            description:
              "payloadFormat cloudevents-binary: the ce-* headers and the body (the data).",
          },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type EventType = Static<typeof EventTypeSchema>;

export const EventTypesSchema = Type.Object(
  { items: Type.Array(EventTypeSchema) },
  { additionalProperties: false },
);
export type EventTypes = Static<typeof EventTypesSchema>;

/** `POST /api/admin/deliveries/{deliveryId}/redeliver`: the new delivery and its endpoint. */
export const QueuedRedeliverySchema = Type.Object(
  { webhookId: Id(), deliveryId: Id({ description: "The new delivery." }) },
  { additionalProperties: false },
);
export type QueuedRedelivery = Static<typeof QueuedRedeliverySchema>;

export const EventIdParamsSchema = Type.Object(
  {
    eventId: Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        "The event's id (evt_...): unique per event and endpoint, as its deliveries carry it.",
    }),
  },
  { additionalProperties: false },
);
export type EventIdParams = Static<typeof EventIdParamsSchema>;

/** `POST /api/admin/events/{eventId}/resend`: the new delivery of the event. */
export const ResentEventSchema = Type.Object(
  { eventId: Type.String(), webhookId: Id(), deliveryId: Id({ description: "The new delivery." }) },
  { additionalProperties: false },
);
export type ResentEvent = Static<typeof ResentEventSchema>;
