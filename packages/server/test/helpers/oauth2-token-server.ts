import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { createLocalJWKSet, jwtVerify, type JWTPayload } from "jose";
import { OAuth2Server } from "oauth2-mock-server";

/** One token request as the token endpoint saw it. */
export interface TokenRequest {
  /** The client's HTTP Basic credentials, decoded (client_secret_basic). */
  basic: { clientId: string; clientSecret: string } | null;
  /** The form parameters. */
  form: Record<string, string>;
}

export interface TokenServer {
  /** `<issuer>/token`. */
  tokenUrl: string;
  /** Every token request so far. */
  requests: TokenRequest[];
  /** Change the next answers: status, body fields (e.g. an OAuth error, expires_in). */
  answerWith(
    change: ((request: TokenRequest, index: number) => { status?: number; body?: object }) | null,
  ): void;
  /** Verifies an access token as a receiver protected by this issuer would: signature, expiry. */
  verify(accessToken: string): Promise<JWTPayload>;
  close(): Promise<void>;
}

function decodeBasic(header: string | undefined): TokenRequest["basic"] {
  if (header === undefined || !header.startsWith("Basic ")) return null;
  const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  // client_secret_basic form-urlencodes both parts before joining them (RFC 6749 2.3.1).
  const unform = (text: string) => decodeURIComponent(text.replace(/\+/g, " "));
  return {
    clientId: unform(decoded.slice(0, colon)),
    clientSecret: unform(decoded.slice(colon + 1)),
  };
}

/**
 * A real OAuth 2.0 authorization server on loopback (oauth2-mock-server): it issues signed JWT
 * access tokens by the client-credentials grant and publishes its keys, so a test receiver can
 * verify tokens as a protected API does.
 */
export async function startTokenServer(): Promise<TokenServer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  const requests: TokenRequest[] = [];
  // Each token unique (as a real issuer's are), even two issued within the same second.
  server.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }) => {
    token.payload.jti = randomUUID();
  });
  let change: Parameters<TokenServer["answerWith"]>[0] = null;
  server.service.on(
    "beforeResponse",
    (response: { statusCode: number; body: Record<string, unknown> }, req: IncomingMessage) => {
      const request: TokenRequest = {
        basic: decodeBasic(req.headers.authorization),
        form: { ...((req as IncomingMessage & { body: Record<string, string> }).body ?? {}) },
      };
      requests.push(request);
      const scripted = change?.(request, requests.length - 1);
      if (scripted?.status !== undefined) response.statusCode = scripted.status;
      if (scripted?.body !== undefined)
        response.body =
          scripted.status !== undefined && scripted.status >= 400
            ? (scripted.body as Record<string, unknown>)
            : { ...response.body, ...scripted.body };
    },
  );
  const jwks = createLocalJWKSet({ keys: server.issuer.keys.toJSON() });
  return {
    tokenUrl: `${server.issuer.url!}/token`,
    requests,
    answerWith(next) {
      change = next;
    },
    async verify(accessToken) {
      return (await jwtVerify(accessToken, jwks, { issuer: server.issuer.url! })).payload;
    },
    close: () => server.stop(),
  };
}
