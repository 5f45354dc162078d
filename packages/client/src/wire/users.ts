/** Users and their bearer tokens (admin). */
import { Type, type Static } from "@sinclair/typebox";
import { Id, Nullable, StringEnum, Timestamp } from "./common.js";

export const USER_ROLES = ["admin", "bot", "user"] as const;
export const UserRoleSchema = StringEnum(USER_ROLES);
export type UserRole = Static<typeof UserRoleSchema>;

export const UserSchema = Type.Object({
  id: Id(),
  username: Type.String(),
  displayName: Type.String(),
  role: UserRoleSchema,
  status: StringEnum(["active", "disabled", "deleted"]),
  createdAt: Timestamp(),
});
export type User = Static<typeof UserSchema>;

export const CreateUserParamsSchema = Type.Object(
  {
    /** Lowercase letters, digits, `.`, `_`, `-`; at most 64 characters. */
    username: Type.String({ pattern: "^[a-z0-9][a-z0-9._-]{0,63}$" }),
    displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    role: UserRoleSchema,
  },
  { additionalProperties: false },
);
export type CreateUserParams = Static<typeof CreateUserParamsSchema>;

export const IssueTokenParamsSchema = Type.Object(
  {
    /** 60 seconds to 366 days; default 30 days. */
    ttlSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 366 * 24 * 3600 })),
  },
  { additionalProperties: false },
);
export type IssueTokenParams = Static<typeof IssueTokenParamsSchema>;

export const IssuedTokenSchema = Type.Object({
  token: Type.String(),
  /** The token's id (its jti): `DELETE /api/admin/tokens/{tokenId}` revokes it. */
  tokenId: Type.String({
    description: "the token's id (jti): DELETE /api/admin/tokens/{tokenId} revokes it",
  }),
  expiresAt: Timestamp(),
});
export type IssuedToken = Static<typeof IssuedTokenSchema>;

/** `DELETE /api/admin/tokens/{tokenId}`: the id a token was issued with. */
export const TokenIdParamsSchema = Type.Object({
  tokenId: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" }),
});
export type TokenIdParams = Static<typeof TokenIdParamsSchema>;

export const LinkIdentityParamsSchema = Type.Object(
  {
    /** The identity provider's subject: its tokens' `sub`. */
    subject: Type.String({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);
export type LinkIdentityParams = Static<typeof LinkIdentityParamsSchema>;

/** An identity-provider subject linked to a user: its tokens act as that user. */
export const LinkedIdentitySchema = Type.Object({
  userId: Id(),
  issuer: Type.String(),
  subject: Type.String(),
});
export type LinkedIdentity = Static<typeof LinkedIdentitySchema>;

/** A person as every signed-in user sees them (`GET /api/users?query=`). */
export const DirectoryUserSchema = Type.Object({
  id: Id(),
  username: Type.String(),
  displayName: Type.String(),
  /** Users have no picture yet: always null for now. */
  avatarUrl: Nullable(Type.String()),
});
export type DirectoryUser = Static<typeof DirectoryUserSchema>;

/** `GET /api/users`: `query` a prefix of the username or of the display name. */
export const FindUsersParamsSchema = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 200 })),
  /** 1..20, default 20. */
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 20 })),
});
export type FindUsersParams = Static<typeof FindUsersParamsSchema>;

/** The directory's answer: at most 20 people (refine the query for others). */
export const DirectoryUsersSchema = Type.Object({ items: Type.Array(DirectoryUserSchema) });
export type DirectoryUsers = Static<typeof DirectoryUsersSchema>;
