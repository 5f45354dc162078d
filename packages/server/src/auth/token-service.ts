import {
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
  type JWTPayload,
} from "jose";
import type { UserRole } from "../db/schema.js";

export interface VerifiedToken {
  /** Parley user id for tokens this server issued; the identity provider's subject otherwise. */
  subject: string;
  role: UserRole | undefined;
  external: boolean;
}

export interface TokenServiceOptions {
  secret: Uint8Array;
  jwksUrl?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
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
export class TokenService {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  constructor(private readonly options: TokenServiceOptions) {
    this.jwks = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : undefined;
  }

  async issue(claims: {
    userId: number;
    role: UserRole;
    ttlSeconds: number;
  }): Promise<{ token: string; expiresAt: number }> {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + claims.ttlSeconds;
    const token = await new SignJWT({ role: claims.role })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(String(claims.userId))
      .setIssuer(INTERNAL_ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .sign(this.options.secret);
    return { token, expiresAt: exp * 1000 };
  }

  async verify(token: string): Promise<VerifiedToken> {
    let header: { alg?: unknown };
    try {
      header = JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString("utf8")) as {
        alg?: unknown;
      };
    } catch {
      throw new TokenError("malformed token");
    }
    if (header.alg === "HS256") return this.verifyInternal(token);
    if (this.jwks && typeof header.alg === "string" && header.alg !== "none")
      return this.verifyExternal(token);
    throw new TokenError("unsupported token algorithm");
  }

  private async verifyInternal(token: string): Promise<VerifiedToken> {
    const payload = await this.check(() =>
      jwtVerify(token, this.options.secret, {
        algorithms: ["HS256"],
        issuer: INTERNAL_ISSUER,
        requiredClaims: ["sub", "exp"],
      }),
    );
    if (!/^\d+$/.test(payload.sub ?? "")) throw new TokenError("token subject is not a user id");
    return { subject: payload.sub!, role: roleOf(payload), external: false };
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
    return { subject: payload.sub!, role: roleOf(payload), external: true };
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
