import {
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
  type JWTPayload,
} from "jose";
import crypto, { type webcrypto } from "node:crypto";
import type { JwtKey } from "../config/server-keys.js";
import type { UserRole } from "../db/schema.js";

export interface VerifiedToken {
  /** Parley user id for tokens this server issued; the identity provider's subject otherwise. */
  subject: string;
  role: UserRole | undefined;
  external: boolean;
  /** `jti`, when the token has one (every token this server issues does): what revokes it. */
  tokenId: string | undefined;
  /** `iat` in epoch seconds, when the token has one. */
  issuedAt: number | undefined;
  /** The identity provider's `iss`, for external tokens. */
  issuer: string | undefined;
  /** Every claim, for the identity-provider claim mapping. */
  claims: JWTPayload;
}

export interface TokenServiceOptions {
  /** The HS256 keys tokens may be signed with, the one that signs new tokens first. */
  keys: JwtKey[];
  /**
   * Reads the keys again (a `parley keys rotate` run by another process). Called, at most every
   * few seconds, when a token names a `kid` this process does not know.
   */
  reloadKeys?: () => Promise<JwtKey[] | undefined>;
  jwksUrl?: string | undefined;
  /** Told of every token issued (its id, never the token), before the token is handed out. */
  recordIssued?: (issued: IssuedTokenRecord) => Promise<void>;
  issuer?: string | undefined;
  audience?: string | undefined;
}

/** What is kept of an issued token: enough to list and revoke it (epoch ms). */
export interface IssuedTokenRecord {
  tokenId: string;
  userId: number;
  role: UserRole;
  issuedAt: number;
  expiresAt: number;
}

const ROLES: readonly string[] = ["admin", "bot", "user"];
const INTERNAL_ISSUER = "parley";

export class TokenError extends Error {
  readonly code = "unauthorized";
}

/**
 * Issues and verifies bearer tokens. Internal tokens: HS256 with the server key, claims sub (user
 * id), role, iat, exp, iss "parley". Only HS256 is accepted for them (so `alg: none` and algorithm
 * confusion fail). Identity-provider tokens are checked against its JWKS, issuer and audience.
 */
const RELOAD_INTERVAL_MS = 5_000;

export class TokenService {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  private keys: JwtKey[];
  private lastReload = 0;
  private readonly verifyingKeys = new WeakMap<JwtKey, Promise<webcrypto.CryptoKey>>();

  constructor(private readonly options: TokenServiceOptions) {
    this.jwks = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : undefined;
    if (options.keys.length === 0) throw new Error("TokenService needs at least one key");
    this.keys = options.keys;
  }

  /**
   * A token for a user, signed with the current key and naming it in `kid`; `jti` is the token's
   * id, by which it can be revoked.
   */
  async issue(claims: {
    userId: number;
    role: UserRole;
    ttlSeconds: number;
  }): Promise<{ token: string; tokenId: string; expiresAt: number }> {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + claims.ttlSeconds;
    const tokenId = crypto.randomBytes(16).toString("base64url");
    const key = this.keys[0]!;
    const token = await new SignJWT({ role: claims.role })
      .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: key.kid })
      .setSubject(String(claims.userId))
      .setIssuer(INTERNAL_ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setJti(tokenId)
      .sign(key.secret);
    await this.options.recordIssued?.({
      tokenId,
      userId: claims.userId,
      role: claims.role,
      issuedAt: now * 1000,
      expiresAt: exp * 1000,
    });
    return { token, tokenId, expiresAt: exp * 1000 };
  }

  /** The keys that may have signed a token with this `kid` (all of them for a token without one). */
  private async keysFor(kid: unknown): Promise<JwtKey[]> {
    if (typeof kid !== "string") return this.keys;
    let found = this.keys.filter((key) => key.kid === kid);
    if (
      found.length === 0 &&
      this.options.reloadKeys &&
      Date.now() - this.lastReload > RELOAD_INTERVAL_MS
    ) {
      this.lastReload = Date.now();
      this.keys = (await this.options.reloadKeys().catch(() => undefined)) ?? this.keys;
      found = this.keys.filter((key) => key.kid === kid);
    }
    if (found.length === 0) throw new TokenError("the token's key id is not known");
    return found;
  }

  async verify(token: string): Promise<VerifiedToken> {
    let header: { alg?: unknown; kid?: unknown };
    try {
      header = JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString("utf8")) as {
        alg?: unknown;
        kid?: unknown;
      };
    } catch {
      throw new TokenError("malformed token");
    }
    if (typeof header !== "object" || header === null) throw new TokenError("malformed token");
    if (header.alg === "HS256") return this.verifyInternal(token, header.kid);
    if (this.jwks && typeof header.alg === "string" && header.alg !== "none")
      return this.verifyExternal(token);
    throw new TokenError("unsupported token algorithm");
  }

  /**
   * The key as a WebCrypto HMAC key, imported once: given the raw secret, jose imports it again on
   * every verification, which took about as long as the verification itself.
   */
  private verifyingKey(key: JwtKey): Promise<webcrypto.CryptoKey> {
    let cryptoKey = this.verifyingKeys.get(key);
    if (!cryptoKey) {
      cryptoKey = crypto.webcrypto.subtle.importKey(
        "raw",
        key.secret,
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["verify"],
      );
      this.verifyingKeys.set(key, cryptoKey);
    }
    return cryptoKey;
  }

  private async verifyInternal(token: string, kid: unknown): Promise<VerifiedToken> {
    const keys = await this.keysFor(kid);
    let payload: JWTPayload | undefined;
    let failure: unknown;
    for (const key of keys) {
      try {
        const cryptoKey = await this.verifyingKey(key);
        payload = await this.check(() =>
          jwtVerify(token, cryptoKey, {
            algorithms: ["HS256"],
            issuer: INTERNAL_ISSUER,
            requiredClaims: ["sub", "exp"],
          }),
        );
        break;
      } catch (error) {
        failure = error;
      }
    }
    if (!payload) throw failure;
    if (!/^\d+$/.test(payload.sub ?? "")) throw new TokenError("token subject is not a user id");
    return {
      subject: payload.sub!,
      role: roleOf(payload),
      external: false,
      tokenId: typeof payload.jti === "string" ? payload.jti : undefined,
      issuedAt: typeof payload.iat === "number" ? payload.iat : undefined,
      issuer: undefined,
      claims: payload,
    };
  }

  private async verifyExternal(token: string): Promise<VerifiedToken> {
    const payload = await this.check(() =>
      jwtVerify(token, this.jwks!, {
        algorithms: ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"],
        ...(this.options.issuer ? { issuer: this.options.issuer } : {}),
        ...(this.options.audience ? { audience: this.options.audience } : {}),
        requiredClaims: ["sub", "exp"],
      }),
    );
    return {
      subject: payload.sub!,
      role: roleOf(payload),
      external: true,
      tokenId: typeof payload.jti === "string" ? payload.jti : undefined,
      issuedAt: typeof payload.iat === "number" ? payload.iat : undefined,
      issuer: payload.iss,
      claims: payload,
    };
  }

  private async check(verify: () => Promise<{ payload: JWTPayload }>): Promise<JWTPayload> {
    try {
      return (await verify()).payload;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new TokenError("token expired");
      if (error instanceof joseErrors.JOSEError)
        throw new TokenError(`invalid token (${error.code})`);
      throw new TokenError("invalid token");
    }
  }
}

function roleOf(payload: JWTPayload): UserRole | undefined {
  return typeof payload.role === "string" && ROLES.includes(payload.role)
    ? (payload.role as UserRole)
    : undefined;
}

/** Parses "30d", "12h", "15m", "90s" or a bare number of seconds. */
export function parseTtl(text: string): number {
  const match = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!match)
    throw new Error(`invalid TTL "${text}": use a number of seconds or 90s, 15m, 12h, 30d`);
  const unit = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "" | "s" | "m" | "h" | "d"];
  const seconds = Number(match[1]) * unit;
  if (seconds < 1) throw new Error("TTL must be at least one second");
  return seconds;
}
