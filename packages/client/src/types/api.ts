/**
 * The JSON shapes of Parley's HTTP API (described in docs/chat-api.md and docs/webhooks.md; the
 * reference is served at /docs, OpenAPI at /openapi.json). Ids are integers; timestamps are
 * ISO-8601 UTC strings with milliseconds.
 *
 * Each shape is the static type of its schema in `../wire/`, the schemas the server validates
 * and answers with: the types cannot drift from what the server does.
 */
export type { ListParams, Page, ProblemDetails } from "../wire/common.js";

// Users
export type {
  CreateUserParams,
  DirectoryUser,
  DirectoryUsers,
  FindUsersParams,
  IssuedToken,
  IssueTokenParams,
  LinkedIdentity,
  LinkIdentityParams,
  TokenIdParams,
  User,
  UserRole,
} from "../wire/users.js";
export type {
  AcceptInviteParams,
  AuthProviders,
  ChangePasswordParams,
  CreateInviteParams,
  CsrfToken,
  Invite,
  LoginParams,
  SignedIn,
} from "../wire/auth.js";

// The admin pages: people, tokens, rooms, moderation context, endpoint health over 7 days
export type {
  FlagContext,
  HealthDay,
  HealthTrend,
  ListAdminRoomsParams,
  ListTokensParams,
  ResetPasswordParams,
  TokenInfo,
  UpdateUserParams,
} from "../wire/admin.js";

// Rooms, direct messages, messages, files, moderation
export type {
  AddMemberParams,
  CreateRoomParams,
  ListRoomsParams,
  MarkReadParams,
  OpenDmParams,
  ReadMarker,
  Room,
  RoomNameParams,
  RoomPeer,
  RoomVisibility,
} from "../wire/rooms.js";
export type { Call, CallState, IceServer } from "../wire/calls.js";
export type {
  ContentFormat,
  DeletedMessage,
  EditMessageParams,
  FlagReviewStatus,
  ListFlagsParams,
  ListMessagesParams,
  Message,
  MessageFile,
  MessageListItem,
  MessageRevision,
  MessageRevisions,
  MessageSender,
  ModerationFlag,
  ModerationStatus,
  PostMessageParams,
  StoredMessage,
  UploadedFile,
} from "../wire/messages.js";
export type { SearchHit, SearchParams } from "../wire/search.js";

// Outbound webhooks
export type {
  CreateWebhookParams,
  DeliveryAttempt,
  DeliveryDetail,
  DeliverySearchItem,
  DeliveryStatus,
  DeliverySummary,
  EndpointHealth,
  EndpointState,
  EventSubscription,
  EventType,
  EventTypes,
  HeldLane,
  ListDeliveriesParams,
  ListWebhooksParams,
  Ordering,
  PayloadFormat,
  QueuedDelivery,
  QueuedRedelivery,
  Recovered,
  RecoverParams,
  Redelivery,
  ReplayMissingParams,
  ResentEvent,
  RotatedSecret,
  RotateSecretParams,
  SearchDeliveriesParams,
  SignatureScheme,
  TestWebhookParams,
  UpdateWebhookParams,
  Verification,
  Webhook,
} from "../wire/webhooks.js";
export type {
  AuthType,
  EndpointAuth,
  EndpointAuthParams,
  EndpointTls,
  EndpointTlsParams,
} from "../wire/endpoint-credentials.js";

// Inbound webhooks
export type {
  CreateInboundWebhookParams,
  GitHubIngestParams,
  InboundWebhook,
  InboundWebhookWithToken,
  IngestEditParams,
  IngestEditResult,
  IngestParams,
  IngestResult,
  ListInboundWebhooksParams,
  SlackIngestParams,
  StripeIngestParams,
  UpdateInboundWebhookParams,
} from "../wire/inbound-webhooks.js";

// The Discord-compatible inbound route
export type {
  DiscordEditParams,
  DiscordError,
  DiscordExecuteParams,
  DiscordMessage,
} from "../wire/discord.js";

export type { HealthStatus } from "../wire/operations.js";
