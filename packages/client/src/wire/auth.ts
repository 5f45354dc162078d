/** Signing in: passwords and sessions, invitations, single sign-on (docs/chat-api.md, "Sign-in"). */
import { Type, type Static } from "@sinclair/typebox";
import { Timestamp } from "./common.js";
import { CreateUserParamsSchema, UserRoleSchema, UserSchema } from "./users.js";

/** Passwords are 10 to 1024 characters. */
export const PasswordSchema = Type.String({ minLength: 10, maxLength: 1024 });

export const LoginParamsSchema = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 64 }),
    // Any length up to the limit: a wrong password is invalid_credentials, whatever its length.
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type LoginParams = Static<typeof LoginParamsSchema>;

/** The answer of a sign-in (login, accepting an invitation): it also sets the session cookie. */
export const SignedInSchema = Type.Object({
  /** The session's secret, usable as a bearer token (`pls_...`) by clients without cookies. */
  token: Type.String(),
  expiresAt: Timestamp(),
  user: UserSchema,
});
export type SignedIn = Static<typeof SignedInSchema>;

/** `GET /api/auth/csrf`: the value of the X-Parley-CSRF header for this session. */
export const CsrfTokenSchema = Type.Object({ csrfToken: Type.String() });
export type CsrfToken = Static<typeof CsrfTokenSchema>;

export const ChangePasswordParamsSchema = Type.Object(
  {
    currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
    newPassword: PasswordSchema,
  },
  { additionalProperties: false },
);
export type ChangePasswordParams = Static<typeof ChangePasswordParamsSchema>;

export const CreateInviteParamsSchema = Type.Object(
  {
    role: UserRoleSchema,
    displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type CreateInviteParams = Static<typeof CreateInviteParamsSchema>;

/** A new invitation: the link to hand over (single use, 7 days). */
export const InviteSchema = Type.Object({ url: Type.String(), expiresAt: Timestamp() });
export type Invite = Static<typeof InviteSchema>;

export const AcceptInviteParamsSchema = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 128 }),
    username: CreateUserParamsSchema.properties.username,
    password: PasswordSchema,
  },
  { additionalProperties: false },
);
export type AcceptInviteParams = Static<typeof AcceptInviteParamsSchema>;

/** `GET /api/auth/providers`: how the sign-in pages may sign people in. */
export const AuthProvidersSchema = Type.Object({
  password: Type.Boolean(),
  /** Single sign-on, when configured: the button's name and where it starts. */
  oidc: Type.Union([Type.Object({ name: Type.String(), startUrl: Type.String() }), Type.Null()]),
});
export type AuthProviders = Static<typeof AuthProvidersSchema>;
