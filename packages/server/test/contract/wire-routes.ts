/**
 * Every JSON API route with the wire schemas it validates and answers with, keyed as the client's
 * route map keys them. Two tests hold it in place from both sides:
 * - wire-routes.test.ts: the server documents (in /openapi.json, built from the schemas it
 *   registered) exactly these schemas for exactly these routes;
 * - wire-types.test-d.ts: the client's route map types each route's parameters and answer as
 *   exactly these schemas' static types.
 */
import {
  FlagContextSchema,
  HealthTrendSchema,
  ListAdminRoomsParamsSchema,
  ListTokensParamsSchema,
  ResetPasswordParamsSchema,
  TokenInfoSchema,
  UpdateUserParamsSchema,
  AcceptInviteParamsSchema,
  AuthProvidersSchema,
  ChangePasswordParamsSchema,
  CreateInviteParamsSchema,
  CsrfTokenSchema,
  InviteSchema,
  LoginParamsSchema,
  SignedInSchema,
  DiscordEditParamsSchema,
  DiscordExecuteParamsSchema,
  DiscordExecuteQuerySchema,
  DiscordMessageParamsSchema,
  DiscordMessageQuerySchema,
  DiscordMessageSchema,
  DiscordWebhookParamsSchema,
  AddMemberParamsSchema,
  CallSchema,
  CreateRoomParamsSchema,
  DirectoryUsersSchema,
  FindUsersParamsSchema,
  ListRoomsParamsSchema,
  MarkReadParamsSchema,
  ReadMarkerSchema,
  CallStateSchema,
  CreateInboundWebhookParamsSchema,
  CreateUserParamsSchema,
  CreateWebhookParamsSchema,
  DeliveryDetailSchema,
  EventIdParamsSchema,
  QueuedRedeliverySchema,
  ResentEventSchema,
  DeliverySearchItemSchema,
  DeliverySummarySchema,
  EditMessageParamsSchema,
  EmptyBodySchema,
  EventTypesSchema,
  RecoveredSchema,
  RecoverParamsSchema,
  ReplayMissingParamsSchema,
  RotatedSecretSchema,
  RotateSecretParamsSchema,
  SearchDeliveriesParamsSchema,
  SearchHitSchema,
  SearchParamsSchema,
  IdParams,
  IdParamsSchema,
  InboundWebhookSchema,
  InboundWebhookWithTokenSchema,
  IngestParamsSchema,
  GitHubIngestParamsSchema,
  StripeIngestParamsSchema,
  IngestEditParamsSchema,
  IngestEditResultSchema,
  IngestMessageParamsSchema,
  IngestResultSchema,
  ListMessagesParamsSchema,
  MessageListItemSchema,
  MessageRevisionsSchema,
  ReactionParamsSchema,
  IngestTokenParamsSchema,
  IssuedTokenSchema,
  IssueTokenParamsSchema,
  LinkedIdentitySchema,
  LinkIdentityParamsSchema,
  ListDeliveriesParamsSchema,
  ListFlagsParamsSchema,
  ListInboundWebhooksParamsSchema,
  ListParamsSchema,
  ListWebhooksParamsSchema,
  MessageSchema,
  ModerationFlagSchema,
  OpenDmParamsSchema,
  PageOf,
  PostMessageParamsSchema,
  QueuedDeliverySchema,
  TestWebhookParamsSchema,
  RedeliverySchema,
  RoomNameParamsSchema,
  RoomSchema,
  SlackIngestParamsSchema,
  StoredMessageSchema,
  TokenIdParamsSchema,
  UpdateInboundWebhookParamsSchema,
  UpdateWebhookParamsSchema,
  UploadedFileSchema,
  UserSchema,
  WebhookSchema,
} from "@parley/client/wire";
import type { TSchema } from "@sinclair/typebox";

export interface WireRoute {
  /** The success status; 204 answers no body. */
  status: 200 | 201 | 202 | 204;
  /** The JSON answer; "text" for a text/plain one; "binary" for a file's bytes. */
  response?: TSchema | "text" | "binary";
  params?: TSchema;
  querystring?: TSchema;
  /** The JSON body; "multipart" for a file upload. */
  body?: TSchema | "multipart";
  /** The client passes the body whole as `data` (it has a key named like an endpoint option). */
  bodyAsData?: true;
}

const roomParams = IdParams("roomId");

export const WIRE_ROUTES = {
  // Sign-in
  "POST /api/auth/login": { status: 200, body: LoginParamsSchema, response: SignedInSchema },
  "POST /api/auth/logout": { status: 204 },
  "GET /api/auth/csrf": { status: 200, response: CsrfTokenSchema },
  "GET /api/auth/providers": { status: 200, response: AuthProvidersSchema },
  "POST /api/auth/accept-invite": {
    status: 200,
    body: AcceptInviteParamsSchema,
    response: SignedInSchema,
  },
  "POST /api/auth/reset-password": {
    status: 200,
    body: ResetPasswordParamsSchema,
    response: SignedInSchema,
  },
  "GET /api/me": { status: 200, response: UserSchema },
  "PUT /api/me/password": { status: 204, body: ChangePasswordParamsSchema },
  "POST /api/admin/invites": {
    status: 201,
    body: CreateInviteParamsSchema,
    response: InviteSchema,
  },

  // Users (admin)
  "POST /api/admin/users": { status: 201, body: CreateUserParamsSchema, response: UserSchema },
  "GET /api/admin/users": {
    status: 200,
    querystring: ListParamsSchema,
    response: PageOf(UserSchema),
  },
  "GET /api/admin/users/{id}": { status: 200, params: IdParamsSchema, response: UserSchema },
  "POST /api/admin/users/{id}/tokens": {
    status: 201,
    params: IdParamsSchema,
    body: IssueTokenParamsSchema,
    response: IssuedTokenSchema,
  },
  "POST /api/admin/users/{id}/disable": {
    status: 200,
    params: IdParamsSchema,
    response: UserSchema,
  },
  "PATCH /api/admin/users/{id}": {
    status: 200,
    params: IdParamsSchema,
    body: UpdateUserParamsSchema,
    response: UserSchema,
  },
  "POST /api/admin/users/{id}/enable": {
    status: 200,
    params: IdParamsSchema,
    response: UserSchema,
  },
  "POST /api/admin/users/{id}/reset-sign-in": {
    status: 201,
    params: IdParamsSchema,
    response: InviteSchema,
  },
  "DELETE /api/admin/users/{id}": { status: 204, params: IdParamsSchema },
  "POST /api/admin/users/{id}/revoke-tokens": { status: 204, params: IdParamsSchema },
  "POST /api/admin/users/{id}/identities": {
    status: 201,
    params: IdParamsSchema,
    body: LinkIdentityParamsSchema,
    response: LinkedIdentitySchema,
  },
  "GET /api/admin/tokens": {
    status: 200,
    querystring: ListTokensParamsSchema,
    response: PageOf(TokenInfoSchema),
  },
  "DELETE /api/admin/tokens/{tokenId}": { status: 204, params: TokenIdParamsSchema },

  "GET /api/users": {
    status: 200,
    querystring: FindUsersParamsSchema,
    response: DirectoryUsersSchema,
  },

  // Rooms and direct messages
  "POST /api/rooms": { status: 201, body: CreateRoomParamsSchema, response: RoomSchema },
  "GET /api/rooms": {
    status: 200,
    querystring: ListRoomsParamsSchema,
    response: PageOf(RoomSchema),
  },
  "GET /api/rooms/{roomId}": { status: 200, params: roomParams, response: RoomSchema },
  "POST /api/rooms/{roomId}/join": { status: 200, params: roomParams, response: RoomSchema },
  "POST /api/rooms/{roomId}/leave": { status: 204, params: roomParams },
  "POST /api/rooms/{roomId}/members": {
    status: 200,
    params: roomParams,
    body: AddMemberParamsSchema,
    response: RoomSchema,
  },
  "PUT /api/rooms/{roomId}/read": {
    status: 200,
    params: roomParams,
    body: MarkReadParamsSchema,
    response: ReadMarkerSchema,
  },
  "POST /api/rooms/{roomId}/call/join": { status: 200, params: roomParams, response: CallSchema },
  "POST /api/rooms/{roomId}/call/leave": { status: 204, params: roomParams },
  "GET /api/rooms/{roomId}/call": { status: 200, params: roomParams, response: CallStateSchema },
  "DELETE /api/rooms/{roomId}": { status: 204, params: roomParams },
  "DELETE /api/admin/rooms/{roomId}": { status: 204, params: roomParams },
  "GET /api/admin/rooms": {
    status: 200,
    querystring: ListAdminRoomsParamsSchema,
    response: PageOf(RoomSchema),
  },
  "POST /api/dms": { status: 201, body: OpenDmParamsSchema, response: RoomSchema },
  "POST /api/dms/{dmId}/promote": {
    status: 200,
    params: IdParams("dmId"),
    body: RoomNameParamsSchema,
    response: RoomSchema,
  },

  // Messages and files
  "POST /api/rooms/{roomId}/messages": {
    status: 201,
    params: roomParams,
    body: PostMessageParamsSchema,
    response: StoredMessageSchema,
  },
  "GET /api/rooms/{roomId}/messages": {
    status: 200,
    params: roomParams,
    querystring: ListMessagesParamsSchema,
    response: PageOf(MessageListItemSchema),
  },
  "GET /api/admin/rooms/{roomId}/messages": {
    status: 200,
    params: roomParams,
    querystring: ListMessagesParamsSchema,
    response: PageOf(MessageListItemSchema),
  },
  "GET /api/rooms/{roomId}/messages/{messageId}": {
    status: 200,
    params: IdParams("roomId", "messageId"),
    response: MessageSchema,
  },
  "PATCH /api/rooms/{roomId}/messages/{messageId}": {
    status: 200,
    params: IdParams("roomId", "messageId"),
    body: EditMessageParamsSchema,
    response: StoredMessageSchema,
  },
  "DELETE /api/rooms/{roomId}/messages/{messageId}": {
    status: 204,
    params: IdParams("roomId", "messageId"),
  },
  "GET /api/rooms/{roomId}/messages/{messageId}/revisions": {
    status: 200,
    params: IdParams("roomId", "messageId"),
    response: MessageRevisionsSchema,
  },
  "PUT /api/rooms/{roomId}/messages/{messageId}/reactions/{emoji}": {
    status: 204,
    params: ReactionParamsSchema,
  },
  "DELETE /api/rooms/{roomId}/messages/{messageId}/reactions/{emoji}": {
    status: 204,
    params: ReactionParamsSchema,
  },
  "POST /api/rooms/{roomId}/files": {
    status: 201,
    params: roomParams,
    body: "multipart",
    response: UploadedFileSchema,
  },
  "GET /api/rooms/{roomId}/files/{fileId}": {
    status: 200,
    params: IdParams("roomId", "fileId"),
    response: "binary",
  },
  "GET /api/search": {
    status: 200,
    querystring: SearchParamsSchema,
    response: PageOf(SearchHitSchema),
  },

  // Moderation (admin)
  "GET /api/admin/moderation/flags": {
    status: 200,
    querystring: ListFlagsParamsSchema,
    response: PageOf(ModerationFlagSchema),
  },
  "GET /api/admin/moderation/flags/{id}": {
    status: 200,
    params: IdParamsSchema,
    response: ModerationFlagSchema,
  },
  "GET /api/admin/moderation/flags/{id}/context": {
    status: 200,
    params: IdParamsSchema,
    response: FlagContextSchema,
  },
  "POST /api/admin/moderation/flags/{id}/approve": {
    status: 200,
    params: IdParamsSchema,
    response: ModerationFlagSchema,
  },
  "POST /api/admin/moderation/flags/{id}/reject": {
    status: 200,
    params: IdParamsSchema,
    response: ModerationFlagSchema,
  },

  // Outbound webhooks (admin; Enterprise)
  "POST /api/admin/webhooks": {
    status: 201,
    body: CreateWebhookParamsSchema,
    bodyAsData: true,
    response: WebhookSchema,
  },
  "GET /api/admin/webhooks": {
    status: 200,
    querystring: ListWebhooksParamsSchema,
    response: PageOf(WebhookSchema),
  },
  "GET /api/admin/webhooks/{id}": { status: 200, params: IdParamsSchema, response: WebhookSchema },
  "GET /api/admin/webhooks/{id}/health": {
    status: 200,
    params: IdParamsSchema,
    response: HealthTrendSchema,
  },
  "PATCH /api/admin/webhooks/{id}": {
    status: 200,
    params: IdParamsSchema,
    body: UpdateWebhookParamsSchema,
    bodyAsData: true,
    response: WebhookSchema,
  },
  "DELETE /api/admin/webhooks/{id}": { status: 204, params: IdParamsSchema },
  "POST /api/admin/webhooks/{id}/test": {
    status: 202,
    params: IdParamsSchema,
    body: TestWebhookParamsSchema,
    response: QueuedDeliverySchema,
  },
  "POST /api/admin/webhooks/{id}/verify": {
    status: 202,
    params: IdParamsSchema,
    body: EmptyBodySchema,
    response: QueuedDeliverySchema,
  },
  "GET /api/admin/webhooks/{id}/deliveries": {
    status: 200,
    params: IdParamsSchema,
    querystring: ListDeliveriesParamsSchema,
    response: PageOf(DeliverySummarySchema),
  },
  "GET /api/admin/webhooks/{id}/deliveries/{deliveryId}": {
    status: 200,
    params: IdParams("id", "deliveryId"),
    response: DeliveryDetailSchema,
  },
  "POST /api/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver": {
    status: 202,
    params: IdParams("id", "deliveryId"),
    body: EmptyBodySchema,
    response: RedeliverySchema,
  },
  "POST /api/admin/deliveries/{deliveryId}/redeliver": {
    status: 202,
    params: IdParams("deliveryId"),
    body: EmptyBodySchema,
    response: QueuedRedeliverySchema,
  },
  "POST /api/admin/events/{eventId}/resend": {
    status: 202,
    params: EventIdParamsSchema,
    body: EmptyBodySchema,
    response: ResentEventSchema,
  },
  "POST /api/admin/webhooks/{id}/rotate-secret": {
    status: 200,
    params: IdParamsSchema,
    body: RotateSecretParamsSchema,
    response: RotatedSecretSchema,
  },
  "POST /api/admin/webhooks/{id}/recover": {
    status: 202,
    params: IdParamsSchema,
    body: RecoverParamsSchema,
    response: RecoveredSchema,
  },
  "POST /api/admin/webhooks/{id}/replay-missing": {
    status: 202,
    params: IdParamsSchema,
    body: ReplayMissingParamsSchema,
    response: RecoveredSchema,
  },
  "GET /api/admin/webhooks/event-types": { status: 200, response: EventTypesSchema },
  "GET /api/admin/deliveries": {
    status: 200,
    querystring: SearchDeliveriesParamsSchema,
    response: PageOf(DeliverySearchItemSchema),
  },

  // Inbound webhooks
  "POST /api/admin/inbound-webhooks": {
    status: 201,
    body: CreateInboundWebhookParamsSchema,
    response: InboundWebhookWithTokenSchema,
  },
  "GET /api/admin/inbound-webhooks": {
    status: 200,
    querystring: ListInboundWebhooksParamsSchema,
    response: PageOf(InboundWebhookSchema),
  },
  "GET /api/admin/inbound-webhooks/{id}": {
    status: 200,
    params: IdParamsSchema,
    response: InboundWebhookSchema,
  },
  "PATCH /api/admin/inbound-webhooks/{id}": {
    status: 200,
    params: IdParamsSchema,
    body: UpdateInboundWebhookParamsSchema,
    response: InboundWebhookSchema,
  },
  "DELETE /api/admin/inbound-webhooks/{id}": { status: 204, params: IdParamsSchema },
  "POST /api/admin/inbound-webhooks/{id}/rotate-token": {
    status: 200,
    params: IdParamsSchema,
    response: InboundWebhookWithTokenSchema,
  },
  "POST /api/public/webhooks/ingest/{token}": {
    status: 200,
    params: IngestTokenParamsSchema,
    body: IngestParamsSchema,
    response: IngestResultSchema,
  },
  "PATCH /api/public/webhooks/ingest/{token}/messages/{messageId}": {
    status: 200,
    params: IngestMessageParamsSchema,
    body: IngestEditParamsSchema,
    response: IngestEditResultSchema,
  },
  "DELETE /api/public/webhooks/ingest/{token}/messages/{messageId}": {
    status: 204,
    params: IngestMessageParamsSchema,
  },
  "POST /api/public/webhooks/ingest/{token}/slack": {
    status: 200,
    params: IngestTokenParamsSchema,
    body: SlackIngestParamsSchema,
    response: "text",
  },
  "POST /api/public/discord/{version}/webhooks/{id}/{token}": {
    status: 200,
    params: DiscordWebhookParamsSchema,
    querystring: DiscordExecuteQuerySchema,
    body: DiscordExecuteParamsSchema,
    response: DiscordMessageSchema,
  },
  "GET /api/public/discord/{version}/webhooks/{id}/{token}/messages/{messageId}": {
    status: 200,
    params: DiscordMessageParamsSchema,
    querystring: DiscordMessageQuerySchema,
    response: DiscordMessageSchema,
  },
  "PATCH /api/public/discord/{version}/webhooks/{id}/{token}/messages/{messageId}": {
    status: 200,
    params: DiscordMessageParamsSchema,
    querystring: DiscordMessageQuerySchema,
    body: DiscordEditParamsSchema,
    response: DiscordMessageSchema,
  },
  "DELETE /api/public/discord/{version}/webhooks/{id}/{token}/messages/{messageId}": {
    status: 204,
    params: DiscordMessageParamsSchema,
    querystring: DiscordMessageQuerySchema,
  },
  "POST /api/public/webhooks/ingest/{token}/github": {
    status: 200,
    params: IngestTokenParamsSchema,
    body: GitHubIngestParamsSchema,
    bodyAsData: true,
    response: IngestResultSchema,
  },
  "POST /api/public/webhooks/ingest/{token}/stripe": {
    status: 200,
    params: IngestTokenParamsSchema,
    body: StripeIngestParamsSchema,
    bodyAsData: true,
    response: IngestResultSchema,
  },
} as const satisfies Record<string, WireRoute>;

export type WireRoutes = typeof WIRE_ROUTES;
