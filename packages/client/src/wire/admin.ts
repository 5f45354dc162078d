/**
 * What the admin pages for people, tokens, rooms, moderation and endpoint health read and change
 * (docs/admin-ui.md; docs/chat-api.md, "Admin: people, tokens and rooms").
 */
import { Type, type Static } from "@sinclair/typebox";
import { Id, listQueryProperties, Nullable, StringEnum, Timestamp } from "./common.js";
import { PasswordSchema } from "./auth.js";
import { MessageListItemSchema, ModerationFlagSchema } from "./messages.js";
import { UserRoleSchema } from "./users.js";

/** `PATCH /api/admin/users/{id}`: a new role or display name (at least one). */
export const UpdateUserParamsSchema = Type.Object(
  {
    role: Type.Optional(UserRoleSchema),
    displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateUserParams = Static<typeof UpdateUserParamsSchema>;

/** `POST /api/auth/reset-password`: the token of a sign-in reset link and the new password. */
export const ResetPasswordParamsSchema = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 128 }),
    password: PasswordSchema,
  },
  { additionalProperties: false },
);
export type ResetPasswordParams = Static<typeof ResetPasswordParamsSchema>;

/** A bearer token the server issued and that still works: never the token itself. */
export const TokenInfoSchema = Type.Object({
  /** The token's id (its `jti`): `DELETE /api/admin/tokens/{tokenId}` revokes it. */
  tokenId: Type.String({ description: "the token's id (jti), by which it is revoked" }),
  userId: Id(),
  username: Type.String(),
  role: UserRoleSchema,
  issuedAt: Timestamp(),
  expiresAt: Timestamp(),
});
export type TokenInfo = Static<typeof TokenInfoSchema>;

/** `GET /api/admin/tokens`: by token id, filtered by the start of the id or by user. */
export const ListTokensParamsSchema = Type.Object({
  ...listQueryProperties,
  prefix: Type.Optional(
    Type.String({
      pattern: "^[A-Za-z0-9_-]{1,64}$",
      description: "the first characters of the token id",
    }),
  ),
  userId: Type.Optional(Id({ description: "only this user's tokens" })),
});
export type ListTokensParams = Static<typeof ListTokensParamsSchema>;

/** `GET /api/admin/rooms`: every live room (and direct message), by id. */
export const ListAdminRoomsParamsSchema = Type.Object({
  ...listQueryProperties,
  query: Type.Optional(Type.String({ maxLength: 200, description: "a prefix of the room's name" })),
  kind: Type.Optional(StringEnum(["room", "dm"])),
});
export type ListAdminRoomsParams = Static<typeof ListAdminRoomsParamsSchema>;

/** `GET /api/admin/moderation/flags/{id}/context`: what a reviewer judges a flag by. */
export const FlagContextSchema = Type.Object({
  /** Up to 5 messages of the same conversation (room, or thread) before it, oldest first. */
  before: Type.Array(MessageListItemSchema),
  /** Up to 5 messages of the same conversation after it, oldest first. */
  after: Type.Array(MessageListItemSchema),
  /** The author's 10 most recent other flags, newest first (none for an integration). */
  authorFlags: Type.Array(ModerationFlagSchema),
});
export type FlagContext = Static<typeof FlagContextSchema>;

/** One day of an endpoint's attempts: the 24 hours from `start` to `end`. */
export const HealthDaySchema = Type.Object({
  start: Timestamp(),
  end: Timestamp(),
  attempts: Type.Integer({ minimum: 0 }),
  successes: Type.Integer({ minimum: 0 }),
  /** 0..1; null without attempts. */
  successRate: Nullable(Type.Number(), { description: "0..1; null without attempts" }),
});
export type HealthDay = Static<typeof HealthDaySchema>;

/**
 * `GET /api/admin/webhooks/{id}/health`: the success rate of the last 7 days, one entry per 24
 * hours ending now, oldest first (the last one is the 24 hours `health` shows).
 */
export const HealthTrendSchema = Type.Object({
  webhookId: Id(),
  days: Type.Array(HealthDaySchema),
});
export type HealthTrend = Static<typeof HealthTrendSchema>;
