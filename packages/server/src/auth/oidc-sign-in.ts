import crypto from "node:crypto";
import * as oidc from "openid-client";
import type { AppContext } from "../app-context.js";
import { findUserRowByUsername, insertUserRow } from "../chat/users-repository.js";
import { isUniqueViolation } from "../db/dialect.js";
import { AppError } from "../errors/app-error.js";
import {
  deleteExpiredOidcLogins,
  findLinkedUser,
  insertOidcLogin,
  takeOidcLogin,
} from "./oidc-repository.js";
import { upsertUserIdentity } from "./principals-repository.js";

/** A sign-on must come back from the provider within 10 minutes of its start. */
export const OIDC_LOGIN_TTL_MS = 10 * 60 * 1000;

const SCOPES = "openid profile email";

function stateHash(state: string): string {
  return crypto.createHash("sha256").update(state).digest("hex");
}

function failed(why: string): AppError {
  return new AppError("invalid_credentials", `single sign-on did not complete: ${why}`);
}

export interface OidcSignIn {
  /** Where to send the browser, and the state to bind to it (a cookie). */
  start(redirectUri: string, returnTo: string): Promise<{ url: string; state: string }>;
  /** The user the provider vouched for (created when sign-up is allowed), and where to go. */
  finish(input: {
    redirectUri: string;
    query: string;
    state: string | undefined;
  }): Promise<{ userId: number; returnTo: string }>;
}

/**
 * OpenID Connect sign-on, authorization code with PKCE (S256), through openid-client. The
 * provider's metadata is discovered at the first sign-on (and again after a failure). An attempt
 * (state, nonce, PKCE verifier) is kept in the database between the start and the redirect back,
 * so any process can finish it, and the browser that started it holds its state in a cookie: a
 * callback carrying another browser's state is refused (login CSRF). A plain-http issuer is
 * accepted only on loopback (a development provider), never across a network.
 */
export function createOidcSignIn(ctx: AppContext): OidcSignIn | undefined {
  const { oidcIssuer, oidcClientId, oidcClientSecret } = ctx.config;
  if (!oidcIssuer || !oidcClientId || !oidcClientSecret) return undefined;
  const issuer = new URL(oidcIssuer);
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(issuer.hostname);
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () => {
    discovered ??= oidc
      .discovery(issuer, oidcClientId, oidcClientSecret, undefined, {
        execute: issuer.protocol === "http:" && loopback ? [oidc.allowInsecureRequests] : [],
      })
      .catch((error: unknown) => {
        discovered = undefined;
        throw new AppError(
          "service_unavailable",
          `the single sign-on provider could not be reached (${(error as Error).message})`,
        );
      });
    return discovered;
  };

  return {
    async start(redirectUri, returnTo) {
      const config = await configuration();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const now = ctx.now();
      await deleteExpiredOidcLogins(ctx.db, now);
      await insertOidcLogin(ctx.db, {
        stateHash: stateHash(state),
        nonce,
        codeVerifier,
        returnTo,
        expiresAt: now + OIDC_LOGIN_TTL_MS,
      });
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: SCOPES,
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: "S256",
      });
      return { url: url.href, state };
    },

    async finish({ redirectUri, query, state }) {
      const given = new URLSearchParams(query).get("state");
      if (!state || !given || given !== state)
        throw failed("it was not started in this browser, or took longer than 10 minutes");
      const login = await takeOidcLogin(ctx.db, stateHash(state));
      if (!login || Number(login.expires_at) <= ctx.now())
        throw failed("it was already used, or took longer than 10 minutes");
      const config = await configuration();
      let claims: oidc.IDToken | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(
          config,
          new URL(`${redirectUri}?${query}`),
          {
            pkceCodeVerifier: login.code_verifier,
            expectedState: state,
            expectedNonce: login.nonce,
            idTokenExpected: true,
          },
        );
        claims = tokens.claims();
      } catch (error) {
        throw failed((error as Error).message);
      }
      if (!claims?.sub) throw failed("the provider sent no subject");
      return { userId: await userFor(ctx, oidcIssuer, claims), returnTo: login.return_to };
    },
  };
}

/** The user linked to the provider's subject; a new one (role user) when sign-up is allowed. */
async function userFor(ctx: AppContext, issuer: string, claims: oidc.IDToken): Promise<number> {
  const linked = await findLinkedUser(ctx.db, issuer, claims.sub);
  if (linked) {
    if (linked.status !== "active") throw failed("this user is disabled");
    return linked.id;
  }
  if (!ctx.config.oidcAllowSignup)
    throw new AppError(
      "signup_disabled",
      "no Parley user is linked to this account, and sign-up by single sign-on is off: ask an admin for an invitation",
    );
  const base = usernameFrom(claims);
  const displayName =
    typeof claims.name === "string" && claims.name.trim() !== ""
      ? claims.name.trim().slice(0, 200)
      : base;
  for (let n = 1; n <= 50; n++) {
    const username = n === 1 ? base : `${base.slice(0, 60)}-${n}`;
    if (await findUserRowByUsername(ctx.db, username)) continue;
    try {
      const now = ctx.now();
      return await ctx.database.transaction(async (tx) => {
        const row = await insertUserRow(tx.db, {
          username,
          display_name: displayName,
          role: "user",
          status: "active",
          created_at: now,
          updated_at: now,
        });
        await upsertUserIdentity(tx.db, { issuer, subject: claims.sub, userId: row.id, now });
        return row.id;
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // Someone took the name (or the same account signed in twice at once): look again.
      const again = await findLinkedUser(ctx.db, issuer, claims.sub);
      if (again) return again.id;
    }
  }
  throw failed("no free username could be made from the account's name");
}

/** A Parley username from the account's preferred username or e-mail address. */
function usernameFrom(claims: oidc.IDToken): string {
  const preferred =
    typeof claims.preferred_username === "string"
      ? claims.preferred_username
      : typeof claims.email === "string"
        ? claims.email.split("@")[0]!
        : "";
  const cleaned = preferred
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 64);
  return cleaned === "" ? "user" : cleaned;
}
