import type { ColumnType, Generated } from "kysely";

/**
 * Table types shared by SQLite and PostgreSQL. Conventions that keep one vocabulary across both:
 * times are epoch milliseconds (INTEGER / BIGINT), booleans are 0/1 integers, JSON is text.
 */
export type Flag = 0 | 1;
export type UserRole = "admin" | "bot" | "user";
export type UserStatus = "active" | "disabled" | "deleted";
export type DeliveryStatus = "PENDING" | "SUCCESS" | "FAILED" | "EXHAUSTED";

export interface UsersTable {
  id: Generated<number>;
  username: string;
  display_name: string;
  role: UserRole;
  status: UserStatus;
  created_at: number;
  updated_at: number;
  /** Epoch ms: every token of the user issued up to then is revoked (migration 005). */
  tokens_revoked_before: Generated<number | null>;
  /** argon2id PHC string; null without a password (migration 014). */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A signed-in session (migration 014): the SHA-256 of its secret, never the secret. */
export interface SessionsTable {
  id_hash: string;
  user_id: number;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

/** One sign-in attempt counted by the login rate limit, per username and per address. */
export interface LoginAttemptsTable {
  /** "user:<username>" or "addr:<address>". */
  attempt_key: string;
  attempt_id: string;
  attempted_at: number;
}

/** A single-use invitation (migration 014), keyed by the SHA-256 of its token. */
export interface InvitesTable {
  token_hash: string;
  role: UserRole;
  display_name: string | null;
  created_by: number | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  used_by: number | null;
  /** Migration 027: the user whose sign-in this link resets; null for a new user's invitation. */
  user_id: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A single sign-on between its start and the provider's redirect back (migration 014). */
export interface OidcLoginsTable {
  state_hash: string;
  nonce: string;
  code_verifier: string;
  /** Where the browser goes once signed in: /app/ or a page of /admin/. */
  return_to: string;
  expires_at: number;
}

export interface RevokedTokensTable {
  /** The token's `jti`. */
  token_id: string;
  revoked_at: number;
  /** When the token expires anyway (the row may be dropped after that). */
  expires_at: number;
}

/** A bearer token this server issued (migration 027): never the token, only what lists it. */
export interface IssuedTokensTable {
  /** The token's `jti`. */
  token_id: string;
  user_id: number;
  role: UserRole;
  issued_at: number;
  expires_at: number;
}

export interface UserIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: number;
  created_at: number;
}

export interface RoomsTable {
  id: Generated<number>;
  /** null for a direct-message conversation that was not promoted. */
  name: string | null;
  kind: "room" | "dm";
  created_by: number;
  deleted_at: number | null;
  created_at: number;
  /** "<lower user id>:<higher user id>" while this is an open DM between those two; else null. */
  dm_key: string | null;
  /** "public": listed, anyone may join; "private": members add members (migration 015). DMs: private. */
  visibility: Generated<"public" | "private">;
  topic: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface RoomMembersTable {
  room_id: number;
  user_id: number;
  joined_at: number;
  /** The member's read marker: the newest message id they have read (0: none; migration 015). */
  last_read_message_id: Generated<number>;
}

/** Who a message mentions: members of its room other than its sender (migration 015). */
export interface MessageMentionsTable {
  user_id: number;
  room_id: number;
  message_id: number;
}

export interface MessagesTable {
  id: Generated<number>;
  room_id: number;
  sender_user_id: number | null;
  inbound_webhook_id: number | null;
  sender_display_name: string;
  sender_avatar_url: string | null;
  content: string;
  content_format: "markdown" | "html";
  moderation_status: "none" | "FLAGGED" | "QUARANTINED" | "APPROVED" | "REJECTED";
  created_at: number;
  /** The top-level message this one replies to; null at top level (migration 012). */
  thread_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Replies in its thread, tombstones included. */
  reply_count: Generated<number>;
  last_reply_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1 for the original; each edit adds one (earlier versions: message_revisions). */
  revision: Generated<number>;
  edited_at: ColumnType<number | null, number | null | undefined, number | null>;
  /**
   * Its creation, then any change: edit, delete, a reply in its thread. The post sets it; the
   * column's default (0) is only for rows written before migration 012 filled it in.
   */
  updated_at: ColumnType<number, number | undefined, number>;
  /** Set when deleted: the row stays as a tombstone, its content emptied. */
  deleted_at: ColumnType<number | null, number | null | undefined, number | null>;
  /**
   * The plain text a reader sees (the API's contentText), which search indexes (migration 017);
   * emptied on delete. Rows inserted without it (only tests and benchmarks do) are not found.
   */
  content_text: ColumnType<string, string | undefined, string>;
}

/** The versions an edit replaced (the current one is the message itself). */
export interface MessageRevisionsTable {
  message_id: number;
  revision: number;
  content: string;
  content_format: "markdown" | "html";
  /** When this version was made: the message's creation for revision 1, else its edit. */
  edited_at: number;
}

/** A member's reaction to a message: one row per message, emoji and user (the primary key). */
export interface MessageReactionsTable {
  message_id: number;
  /** One Unicode emoji (a shortcode is stored as its emoji). */
  emoji: string;
  user_id: number;
  created_at: number;
}

export interface FilesTable {
  id: Generated<number>;
  room_id: number;
  uploaded_by: number;
  file_name: string;
  file_size: number;
  file_type: string;
  sha256: string;
  storage_key: string;
  created_at: number;
  /** The message that carries it; null until a post attaches it (migration 016). */
  message_id: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ModerationFlagsTable {
  id: Generated<number>;
  message_id: number;
  room_id: number;
  category: string;
  score: number;
  band: "low" | "medium" | "high";
  status: "FLAGGED" | "QUARANTINED";
  review_status: "pending" | "approved" | "rejected";
  reviewed_by: number | null;
  reviewed_at: number | null;
  created_at: number;
  /** The message's revision moderation judged: 1 for the post, more for an edit (migration 012). */
  revision: Generated<number>;
}

export interface WebhooksTable {
  id: Generated<number>;
  name: string;
  url: string;
  /** AES-256-GCM: base64(iv | tag | ciphertext). */
  secret_ciphertext: string;
  /** JSON array of event names. */
  events: string;
  enabled: Flag;
  created_at: number;
  updated_at: number;
  /** Migration 007 onwards: see docs/webhooks.md, "Operating endpoints". */
  signature_scheme: Generated<SignatureScheme>;
  /** JSON array of the prefixes of wildcard subscriptions ("" for "*"); null without any. */
  event_prefixes: string | null;
  /** ",<id>,<id>," of the rooms this endpoint hears from (instr-searchable); null for all. */
  room_filter: string | null;
  /** AES-256-GCM of the JSON object of extra request headers; null without any. */
  headers_ciphertext: string | null;
  max_per_second: number | null;
  /** Rate cap: the earliest time the next attempt to this endpoint may start. */
  rate_next_at: number | null;
  /** During a rotation overlap: the old secret, sealed, and when it stops being used. */
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: number | null;
  disabled_reason: DisabledReason | null;
  disabled_at: number | null;
  /** Start of the current run of failed attempts; null after a success. */
  failing_since: number | null;
  consecutive_failures: Generated<number>;
  last_success_at: number | null;
  last_failure_at: number | null;
  last_error: string | null;
  /** Migration 010: the endpoint's circuit breaker as last changed by a dispatcher. */
  circuit: Generated<Circuit>;
  circuit_changed_at: number | null;
  /** Migration 020: "none", "room" or "endpoint" (docs/webhooks.md, "Ordered delivery"). */
  ordering: Generated<Ordering>;
  /** Migration 021: the body's format and whether attempts carry a traceparent. */
  payload_format: Generated<PayloadFormat>;
  trace_context: Generated<Flag>;
  /** Migration 022: AES-256-GCM of the JSON `auth` object (outbound/endpoint-auth.ts); null without. */
  auth_ciphertext: Generated<string | null>;
  /** Migration 022: AES-256-GCM of the JSON `tls` settings (certificate, key, passphrase, CA). */
  tls_ciphertext: Generated<string | null>;
  /** The client certificate's subject and end of validity, for reads; null without `tls`. */
  tls_subject: Generated<string | null>;
  tls_expires_at: Generated<number | null>;
  /** Migration 023: the ed25519 key pair (private half sealed), and the old one while rotating. */
  signing_key_ciphertext: string | null;
  /** `whpk_` + base64 of the 32-byte public key. */
  public_key: string | null;
  previous_signing_key_ciphertext: string | null;
  previous_signing_key_expires_at: number | null;
  /** Migration 023: the ownership check (docs/webhooks.md, "Ownership check"). */
  verification: Generated<Verification>;
  verification_challenge: string | null;
  /** Migration 024: the delivery and attempt whose failure disabled it; null for a manual one. */
  disabled_delivery_id: ColumnType<number | null, number | null | undefined, number | null>;
  disabled_attempt: ColumnType<number | null, number | null | undefined, number | null>;
}

export type Verification = "not_required" | "pending" | "verified";

export type Ordering = "none" | "room" | "endpoint";
export type PayloadFormat = "parley" | "cloudevents" | "cloudevents-binary";
export type Circuit = "closed" | "open" | "half-open";
export type SignatureScheme = "parley" | "standard-webhooks" | "both" | "standard-webhooks-ed25519";
export type DisabledReason = "manual" | "auto_failing" | "gone";

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  event: string;
  /** The exact envelope bytes (UTF-8 JSON) frozen at enqueue; every attempt sends these. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due; null once SUCCESS or EXHAUSTED. */
  next_attempt_at: number | null;
  /** Claim lease: a worker owns the row until this time. */
  locked_until: number | null;
  locked_by: string | null;
  last_response_status: number | null;
  created_at: number;
  updated_at: number;
  /**
   * "evt_" + 26 characters: the same on every attempt, redelivery and recovery. The spine always
   * writes it; rows inserted by hand (tests) may leave it out.
   */
  event_id: ColumnType<string | null, string | undefined, string>;
  /** data.roomId / data.messageId of the event, when it has one (for the delivery search). */
  room_id: number | null;
  message_id: number | null;
  /**
   * Migration 020: the delivery's ordered lane, null for an endpoint without ordering; the room
   * id ("room"; 0 for an event without a room) or 0 ("endpoint"). See lanes.ts.
   */
  lane: ColumnType<number | null, number | null | undefined, number | null>;
  /** Migration 021: the W3C traceparent / tracestate of the request that caused the event. */
  trace_parent: ColumnType<string | null, string | null | undefined, string | null>;
  trace_state: ColumnType<string | null, string | null | undefined, string | null>;
  /** Migration 024: the delivery a redelivery or recovery copied; null for an original. */
  redelivery_of: ColumnType<number | null, number | null | undefined, number | null>;
}

/**
 * Migration 024: an event endpoints may hear, kept as long as deliveries, so an endpoint can be
 * sent what it missed (docs/webhooks.md, "Replay missing events"). Written by the fan-out.
 */
export interface WebhookEventsTable {
  id: Generated<number>;
  event: string;
  /** "evt_" + 16 characters: followed by the endpoint id (10 digits), the event id there. */
  event_id_prefix: string;
  /** The envelope around the endpoint id: prefix + id + suffix is the body sent to it. */
  envelope_prefix: string;
  envelope_suffix: string;
  room_id: number | null;
  message_id: number | null;
  created_at: number;
  trace_parent: string | null;
  trace_state: string | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempt: number;
  started_at: number;
  duration_ms: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  /** Null on attempts recorded before migration 007. */
  webhook_id: number | null;
  /** JSON object of the headers sent / received (at most 20, values cut to 256 characters). */
  request_headers: string | null;
  response_headers: string | null;
}

export interface InboundWebhooksTable {
  id: Generated<number>;
  room_id: number;
  display_name: string;
  avatar_url: string | null;
  enabled: Flag;
  /** Lowercase hex SHA-256 of the token; the token itself is never stored. */
  token_hash: string;
  token_last8: string;
  /** Slack-format posts may set their own username/icon_url (migration 003). */
  allow_overrides: Generated<Flag>;
  /** The GitHub / Stripe signing secret, sealed (config/secret-box.ts); null: none (migration 018). */
  signing_secret_ciphertext: Generated<string | null>;
  created_by: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * An Idempotency-Key (or a sender's delivery id) of an inbound webhook: the claim of its first
 * request, then that request's answer (migration 018).
 */
export interface InboundIdempotencyKeysTable {
  inbound_webhook_id: number;
  /** Lowercase hex SHA-256 of the key's kind and the key. */
  key_hash: string;
  /** Lowercase hex SHA-256 of the first request's raw body bytes. */
  body_hash: string;
  claimed_at: number;
  expires_at: number;
  /** Null while the first request is in flight; then its (2xx) status. */
  status: number | null;
  /** JSON object of the answer's headers worth replaying (content-type, Parley-Ignored). */
  answer_headers: string | null;
  answer_body: string | null;
}

export interface ServerKeysTable {
  name: string;
  value: string;
  created_at: number;
}

export interface JobLocksTable {
  name: string;
  locked_until: number;
  last_run_at: number;
}

export interface RealtimeInstancesTable {
  instance_id: string;
  heartbeat_at: number;
}

export interface RealtimeConnectionsTable {
  instance_id: string;
  room_id: number;
  user_id: number;
}

export interface RealtimePresenceTable {
  room_id: number;
  user_id: number;
  username: string;
  since: number;
  leave_after: number | null;
}

export interface RealtimeCallsTable {
  room_id: number;
  call_id: string;
  started_at: number;
}

export interface RealtimeCallParticipantsTable {
  room_id: number;
  user_id: number;
  username: string;
  joined_at: number;
}

export interface Database {
  users: UsersTable;
  rooms: RoomsTable;
  room_members: RoomMembersTable;
  messages: MessagesTable;
  message_revisions: MessageRevisionsTable;
  message_reactions: MessageReactionsTable;
  message_mentions: MessageMentionsTable;
  files: FilesTable;
  moderation_flags: ModerationFlagsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_events: WebhookEventsTable;
  inbound_webhooks: InboundWebhooksTable;
  inbound_idempotency_keys: InboundIdempotencyKeysTable;
  server_keys: ServerKeysTable;
  revoked_tokens: RevokedTokensTable;
  issued_tokens: IssuedTokensTable;
  user_identities: UserIdentitiesTable;
  sessions: SessionsTable;
  login_attempts: LoginAttemptsTable;
  invites: InvitesTable;
  oidc_logins: OidcLoginsTable;
  job_locks: JobLocksTable;
  realtime_instances: RealtimeInstancesTable;
  realtime_connections: RealtimeConnectionsTable;
  realtime_presence: RealtimePresenceTable;
  realtime_calls: RealtimeCallsTable;
  realtime_call_participants: RealtimeCallParticipantsTable;
}
