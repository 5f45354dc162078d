/**
 * The route map of Parley's API: for each `"<METHOD> <path>"` the parameters a call takes (url
 * placeholders, query parameters, JSON body keys, all in one object as `endpoint` routes them)
 * and the `data` of a successful answer. A body that has a key named like an `endpoint` option
 * (`url`, `method`, `headers`, ...) is passed whole as `data` instead. `request()` checks calls to these routes at compile
 * time; any other route string still works, with loose types.
 */
import type {
  FlagContext,
  HealthTrend,
  ListAdminRoomsParams,
  ListTokensParams,
  ResetPasswordParams,
  TokenInfo,
  UpdateUserParams,
  AcceptInviteParams,
  AuthProviders,
  ChangePasswordParams,
  CreateInviteParams,
  CsrfToken,
  Invite,
  LoginParams,
  SignedIn,
  AddMemberParams,
  Call,
  CreateRoomParams,
  DirectoryUsers,
  FindUsersParams,
  ListRoomsParams,
  MarkReadParams,
  ReadMarker,
  CallState,
  CreateInboundWebhookParams,
  CreateUserParams,
  GitHubIngestParams,
  CreateWebhookParams,
  DeliveryDetail,
  DeliverySearchItem,
  DeliverySummary,
  EditMessageParams,
  EventTypes,
  QueuedRedelivery,
  Recovered,
  RecoverParams,
  ResentEvent,
  RotatedSecret,
  RotateSecretParams,
  SearchDeliveriesParams,
  SearchHit,
  SearchParams,
  InboundWebhook,
  InboundWebhookWithToken,
  IngestEditParams,
  IngestEditResult,
  IngestParams,
  IngestResult,
  DiscordEditParams,
  DiscordExecuteParams,
  DiscordMessage,
  IssuedToken,
  LinkedIdentity,
  LinkIdentityParams,
  ListDeliveriesParams,
  ListMessagesParams,
  ListParams,
  Message,
  MessageListItem,
  MessageRevisions,
  FlagReviewStatus,
  ModerationFlag,
  OpenDmParams,
  Page,
  PostMessageParams,
  QueuedDelivery,
  ReplayMissingParams,
  TestWebhookParams,
  Room,
  SlackIngestParams,
  StripeIngestParams,
  StoredMessage,
  TokenIdParams,
  UpdateInboundWebhookParams,
  UpdateWebhookParams,
  UploadedFile,
  User,
  Webhook,
} from "./api.js";

type Id = { id: number };
type RoomId = { roomId: number };
/** A route that takes no parameters. */
type None = Record<never, never>;
type DiscordMessagePath = { version: string; id: string; token: string; messageId: string };

export interface Routes {
  // Sign-in (the routes that sign in take no credentials; docs/chat-api.md, "Sign-in")
  /** Sets the `parley_session` cookie; `token` is the same session as a bearer token. */
  "POST /api/auth/login": { params: LoginParams; response: SignedIn };
  /** Ends this session in every process and clears its cookie. */
  "POST /api/auth/logout": { params: None; response: undefined };
  /** The X-Parley-CSRF value a cookie-authenticated unsafe request carries. */
  "GET /api/auth/csrf": { params: None; response: CsrfToken };
  "GET /api/auth/providers": { params: None; response: AuthProviders };
  /** Creates the invited user and signs in (the answer of login). */
  "POST /api/auth/accept-invite": { params: AcceptInviteParams; response: SignedIn };
  /** Sets a new password with a sign-in reset link's token, and signs in (the answer of login). */
  "POST /api/auth/reset-password": { params: ResetPasswordParams; response: SignedIn };
  "GET /api/me": { params: None; response: User };
  /** Ends the user's other sessions. */
  "PUT /api/me/password": { params: ChangePasswordParams; response: undefined };
  /** A single-use invitation link, good for 7 days (admin). */
  "POST /api/admin/invites": { params: CreateInviteParams; response: Invite };

  // Users (admin)
  "POST /api/admin/users": { params: CreateUserParams; response: User };
  "GET /api/admin/users": { params: ListParams; response: Page<User> };
  "GET /api/admin/users/{id}": { params: Id; response: User };
  "POST /api/admin/users/{id}/tokens": {
    params: Id & { ttlSeconds?: number };
    response: IssuedToken;
  };
  /** A new role (tokens issued with the old one stop working) or display name. */
  "PATCH /api/admin/users/{id}": { params: Id & UpdateUserParams; response: User };
  "POST /api/admin/users/{id}/disable": { params: Id; response: User };
  "POST /api/admin/users/{id}/enable": { params: Id; response: User };
  /**
   * Ends the user's sessions, removes their password, and answers a single-use link (7 days) on
   * which they set a new one.
   */
  "POST /api/admin/users/{id}/reset-sign-in": { params: Id; response: Invite };
  "DELETE /api/admin/users/{id}": { params: Id; response: undefined };
  /** Revokes every token the user holds now; tokens issued afterwards work. */
  "POST /api/admin/users/{id}/revoke-tokens": { params: Id; response: undefined };
  /** Links an identity provider's subject (its tokens' `sub`) to the user. */
  "POST /api/admin/users/{id}/identities": {
    params: Id & LinkIdentityParams;
    response: LinkedIdentity;
  };
  /** The tokens that still work, by token id; `prefix`: the first characters of the id. */
  "GET /api/admin/tokens": { params: ListTokensParams; response: Page<TokenInfo> };
  /** Revokes one token by the `tokenId` it was issued with. */
  "DELETE /api/admin/tokens/{tokenId}": { params: TokenIdParams; response: undefined };

  /** People to find, for every signed-in user: a prefix of the username or display name. */
  "GET /api/users": { params: FindUsersParams; response: DirectoryUsers };

  // Rooms and direct messages
  "POST /api/rooms": { params: CreateRoomParams; response: Room };
  /** Joined rooms and DMs with unread counts (default), or `scope: "public"`: rooms to browse. */
  "GET /api/rooms": { params: ListRoomsParams; response: Page<Room> };
  "GET /api/rooms/{roomId}": { params: RoomId; response: Room };
  "POST /api/rooms/{roomId}/join": { params: RoomId; response: Room };
  "POST /api/rooms/{roomId}/leave": { params: RoomId; response: undefined };
  /** A member adds someone (fires USER_JOINED_ROOM with via "membership"). */
  "POST /api/rooms/{roomId}/members": { params: RoomId & AddMemberParams; response: Room };
  /** Moves the caller's read marker forward (never back); answers the marker and counts. */
  "PUT /api/rooms/{roomId}/read": { params: RoomId & MarkReadParams; response: ReadMarker };
  "POST /api/rooms/{roomId}/call/join": { params: RoomId; response: Call };
  "POST /api/rooms/{roomId}/call/leave": { params: RoomId; response: undefined };
  "GET /api/rooms/{roomId}/call": { params: RoomId; response: CallState };
  "DELETE /api/rooms/{roomId}": { params: RoomId; response: undefined };
  "DELETE /api/admin/rooms/{roomId}": { params: RoomId; response: undefined };
  /** Every live room and direct message, by id (admin); `query`: a prefix of the name. */
  "GET /api/admin/rooms": { params: ListAdminRoomsParams; response: Page<Room> };
  /** 201 with a new conversation, or 200 with the one already open with that user. */
  "POST /api/dms": { params: OpenDmParams; response: Room };
  "POST /api/dms/{dmId}/promote": { params: { dmId: number; name: string }; response: Room };

  // Messages and files
  "POST /api/rooms/{roomId}/messages": { params: RoomId & PostMessageParams; response: Message };
  /** Top-level messages; `threadId`: a thread's replies; `updatedSince`: what changed. */
  "GET /api/rooms/{roomId}/messages": {
    params: RoomId & ListMessagesParams;
    response: Page<MessageListItem>;
  };
  /** Any room's or direct message's messages, hidden ones included (admin). */
  "GET /api/admin/rooms/{roomId}/messages": {
    params: RoomId & ListMessagesParams;
    response: Page<MessageListItem>;
  };
  "GET /api/rooms/{roomId}/messages/{messageId}": {
    params: RoomId & { messageId: number };
    response: Message;
  };
  /** The author edits: fires MESSAGE_UPDATED (nothing when content and format are unchanged). */
  "PATCH /api/rooms/{roomId}/messages/{messageId}": {
    params: RoomId & { messageId: number } & EditMessageParams;
    response: StoredMessage;
  };
  /** The author or an admin: the content and every revision are erased; fires MESSAGE_DELETED. */
  "DELETE /api/rooms/{roomId}/messages/{messageId}": {
    params: RoomId & { messageId: number };
    response: undefined;
  };
  /** Every version, oldest first, the current one included (admins, bots and the author). */
  "GET /api/rooms/{roomId}/messages/{messageId}/revisions": {
    params: RoomId & { messageId: number };
    response: MessageRevisions;
  };
  /**
   * A member reacts (204, idempotent): `emoji` is one Unicode emoji or a shortcode name such as
   * `tada`; fires REACTION_ADDED when the reaction is new.
   */
  "PUT /api/rooms/{roomId}/messages/{messageId}/reactions/{emoji}": {
    params: RoomId & { messageId: number; emoji: string };
    response: undefined;
  };
  /** A member takes a reaction back (204, idempotent); fires REACTION_REMOVED when it was there. */
  "DELETE /api/rooms/{roomId}/messages/{messageId}/reactions/{emoji}": {
    params: RoomId & { messageId: number; emoji: string };
    response: undefined;
  };
  /** Multipart: pass a `FormData` with a field named `file` as `data`. */
  "POST /api/rooms/{roomId}/files": { params: RoomId & { data: FormData }; response: UploadedFile };
  /**
   * A file's bytes (an ArrayBuffer): served inline for PNG, JPEG, GIF and WebP images, as an
   * attachment otherwise; 404 file_not_found for a file of a message held for review.
   */
  "GET /api/rooms/{roomId}/files/{fileId}": {
    params: RoomId & { fileId: number };
    response: ArrayBuffer;
  };
  /**
   * The messages of your rooms and DMs with every word of `q`, newest first (an admin too finds
   * only what they could read as a member); deleted and hidden messages are never found.
   */
  "GET /api/search": { params: SearchParams; response: Page<SearchHit> };

  // Moderation (admin)
  "GET /api/admin/moderation/flags": {
    params: ListParams & { status?: FlagReviewStatus };
    response: Page<ModerationFlag>;
  };
  "GET /api/admin/moderation/flags/{id}": { params: Id; response: ModerationFlag };
  /** The flagged message's neighbours in its conversation and the author's recent flags. */
  "GET /api/admin/moderation/flags/{id}/context": { params: Id; response: FlagContext };
  "POST /api/admin/moderation/flags/{id}/approve": { params: Id; response: ModerationFlag };
  "POST /api/admin/moderation/flags/{id}/reject": { params: Id; response: ModerationFlag };

  // Outbound webhooks (admin; Enterprise)
  /**
   * The endpoint's `url` field has the name of `endpoint`'s own `url` option, so this body goes in
   * `data`: `request("POST /api/admin/webhooks", { data: { name, url, secret, events } })`.
   */
  "POST /api/admin/webhooks": { params: { data: CreateWebhookParams }; response: Webhook };
  "GET /api/admin/webhooks": { params: ListParams; response: Page<Webhook> };
  "GET /api/admin/webhooks/{id}": { params: Id; response: Webhook };
  /** The success rate of the last 7 days, one entry per 24 hours ending now, oldest first. */
  "GET /api/admin/webhooks/{id}/health": { params: Id; response: HealthTrend };
  /** The body goes in `data`, as for create: `{ id, data: { url, enabled } }`. */
  "PATCH /api/admin/webhooks/{id}": {
    params: Id & { data: UpdateWebhookParams };
    response: Webhook;
  };
  "DELETE /api/admin/webhooks/{id}": { params: Id; response: undefined };
  /** `event`: send that event of the catalogue with its sample data (default WEBHOOK_TEST). */
  "POST /api/admin/webhooks/{id}/test": {
    params: Id & TestWebhookParams;
    response: QueuedDelivery;
  };
  /** Sends the ownership check's WEBHOOK_VERIFICATION challenge again. */
  "POST /api/admin/webhooks/{id}/verify": { params: Id; response: QueuedDelivery };
  /** The secret is shown only in this answer. */
  "POST /api/admin/webhooks/{id}/rotate-secret": {
    params: Id & RotateSecretParams;
    response: RotatedSecret;
  };
  "POST /api/admin/webhooks/{id}/recover": {
    params: Id & RecoverParams;
    response: Recovered;
  };
  /**
   * Sends every event of [since, until) the endpoint's subscription hears now and that never went
   * to it (disabled, filtered out, created later), in event order; `dryRun: true` only counts.
   */
  "POST /api/admin/webhooks/{id}/replay-missing": {
    params: Id & ReplayMissingParams;
    response: Recovered;
  };
  "GET /api/admin/webhooks/event-types": { params: None; response: EventTypes };
  "GET /api/admin/deliveries": {
    params: SearchDeliveriesParams;
    response: Page<DeliverySearchItem>;
  };
  "GET /api/admin/webhooks/{id}/deliveries": {
    params: Id & ListDeliveriesParams;
    response: Page<DeliverySummary>;
  };
  "GET /api/admin/webhooks/{id}/deliveries/{deliveryId}": {
    params: Id & { deliveryId: number };
    response: DeliveryDetail;
  };
  "POST /api/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver": {
    params: Id & { deliveryId: number };
    response: { deliveryId: number };
  };
  /** Redelivers a delivery named by its id alone; the answer names its endpoint. */
  "POST /api/admin/deliveries/{deliveryId}/redeliver": {
    params: { deliveryId: number };
    response: QueuedRedelivery;
  };
  /** Sends an event again, by its id (unique per event and endpoint), to its endpoint. */
  "POST /api/admin/events/{eventId}/resend": {
    params: { eventId: string };
    response: ResentEvent;
  };

  // Inbound webhooks
  "POST /api/admin/inbound-webhooks": {
    params: CreateInboundWebhookParams;
    response: InboundWebhookWithToken;
  };
  "GET /api/admin/inbound-webhooks": {
    params: ListParams & { roomId?: number };
    response: Page<InboundWebhook>;
  };
  "GET /api/admin/inbound-webhooks/{id}": { params: Id; response: InboundWebhook };
  "PATCH /api/admin/inbound-webhooks/{id}": {
    params: Id & UpdateInboundWebhookParams;
    response: InboundWebhook;
  };
  "DELETE /api/admin/inbound-webhooks/{id}": { params: Id; response: undefined };
  "POST /api/admin/inbound-webhooks/{id}/rotate-token": {
    params: Id;
    response: InboundWebhookWithToken;
  };
  /** The token in the path is the only credential: no authorization header is needed. */
  "POST /api/public/webhooks/ingest/{token}": {
    params: { token: string } & IngestParams;
    response: IngestResult;
  };
  /** Edits a message this webhook posted (any other id: 404, as an unknown token). */
  "PATCH /api/public/webhooks/ingest/{token}/messages/{messageId}": {
    params: { token: string; messageId: number } & IngestEditParams;
    response: IngestEditResult;
  };
  /** Deletes a message this webhook posted (any other id: 404, as an unknown token). */
  "DELETE /api/public/webhooks/ingest/{token}/messages/{messageId}": {
    params: { token: string; messageId: number };
    response: undefined;
  };
  /** Slack-compatible ingest: answers 200 with the text `ok`, failures with a bare text code. */
  "POST /api/public/webhooks/ingest/{token}/slack": {
    params: { token: string } & SlackIngestParams;
    response: string;
  };
  /**
   * Discord-compatible Execute Webhook (`version` v6..v10, `id` the inbound webhook's id): with
   * `wait: true` answers the message; without it, 204 and no data.
   */
  "POST /api/public/discord/{version}/webhooks/{id}/{token}": {
    params: {
      version: string;
      id: string;
      token: string;
      wait?: boolean;
      thread_id?: number;
    } & DiscordExecuteParams;
    response: DiscordMessage;
  };
  "GET /api/public/discord/{version}/webhooks/{id}/{token}/messages/{messageId}": {
    params: DiscordMessagePath & { thread_id?: number };
    response: DiscordMessage;
  };
  "PATCH /api/public/discord/{version}/webhooks/{id}/{token}/messages/{messageId}": {
    params: DiscordMessagePath & { thread_id?: number } & DiscordEditParams;
    response: DiscordMessage;
  };
  "DELETE /api/public/discord/{version}/webhooks/{id}/{token}/messages/{messageId}": {
    params: DiscordMessagePath & { thread_id?: number };
    response: undefined;
  };
  /** A GitHub delivery (header X-GitHub-Event): 200 when posted, 204 (no data) for ping or an ignored event. */
  "POST /api/public/webhooks/ingest/{token}/github": {
    params: { token: string; data: GitHubIngestParams };
    response: IngestResult;
  };
  /** A Stripe event, signed with Stripe-Signature when the webhook has a signing secret. */
  "POST /api/public/webhooks/ingest/{token}/stripe": {
    params: { token: string; data: StripeIngestParams };
    response: IngestResult;
  };

  // Operations
  "GET /healthz": { params: None; response: unknown };
  "GET /readyz": { params: None; response: unknown };
  /** Prometheus text format. */
  "GET /metrics": { params: None; response: string };
  "GET /openapi.json": { params: None; response: Record<string, unknown> };
}

/** A route string of the map. */
export type Route = keyof Routes;

/** The routes whose answer is a `Page`: the ones `paginate()` accepts with full types. */
export type PaginatedRoute = {
  [R in Route]: Routes[R]["response"] extends Page<unknown> ? R : never;
}[Route];

/** The item type of a paginated route. */
export type PageItem<R extends string> = R extends Route
  ? Routes[R]["response"] extends Page<infer T>
    ? T
    : unknown
  : unknown;
