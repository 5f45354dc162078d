import crypto from "node:crypto";
import type { Principal } from "../auth/principal.js";
import { turnUrlsOf, type Config, type IceServer } from "../config/load-config.js";

type IceConfig = Pick<
  Config,
  "iceServers" | "iceServersStaticCredentials" | "turnSecret" | "turnUrls" | "turnTtl"
>;

/**
 * A TURN REST API credential (coturn's `use-auth-secret`): the username is `<expiry in unix
 * seconds>:<user id>`, the credential base64(HMAC-SHA1(secret, username)). The TURN server checks
 * both with the same secret and refuses it after the expiry.
 */
export function turnRestCredential(
  secret: string,
  userId: number,
  expiresAtSeconds: number,
): { username: string; credential: string } {
  const username = `${expiresAtSeconds}:${userId}`;
  const credential = crypto.createHmac("sha1", secret).update(username).digest("base64");
  return { username, credential };
}

/**
 * The ICE servers one principal may use for a call, at `nowMs`:
 * - STUN URLs for everyone, without any credential;
 * - for users and admins, PARLEY_TURN_SECRET's TURN URLs with a credential of their own that
 *   expires after PARLEY_TURN_TTL (so a disabled user's relay stops working with it);
 * - the static TURN credentials of PARLEY_ICE_SERVERS only when the operator opted in
 *   (PARLEY_ICE_SERVERS_STATIC_CREDENTIALS), and never to bots: a TURN URL without a credential
 *   is left out (a browser refuses one).
 */
export function iceServersFor(config: IceConfig, principal: Principal, nowMs: number): IceServer[] {
  const person = principal.role !== "bot";
  // Without PARLEY_TURN_URLS the secret covers PARLEY_ICE_SERVERS' own TURN URLs.
  const secretCoversListed = config.turnSecret !== undefined && config.turnUrls === undefined;
  const servers: IceServer[] = [];
  for (const server of config.iceServers) {
    const urls = typeof server.urls === "string" ? [server.urls] : server.urls;
    const turn = new Set(turnUrlsOf(server));
    const stun = urls.filter((url) => !turn.has(url));
    const staticTurn =
      person &&
      !secretCoversListed &&
      config.iceServersStaticCredentials &&
      turn.size > 0 &&
      server.username !== undefined &&
      server.credential !== undefined;
    if (staticTurn) servers.push(server);
    else if (stun.length > 0)
      servers.push({ urls: typeof server.urls === "string" ? stun[0]! : stun });
  }
  if (person && config.turnSecret !== undefined) {
    const urls = config.turnUrls ?? config.iceServers.flatMap((server) => turnUrlsOf(server));
    const expiresAt = Math.floor(nowMs / 1000) + config.turnTtl;
    servers.push({ urls, ...turnRestCredential(config.turnSecret, principal.userId, expiresAt) });
  }
  return servers;
}

/** True when PARLEY_ICE_SERVERS holds a TURN credential that is not handed out (worth a warning). */
export function withholdsStaticCredentials(config: IceConfig): boolean {
  return (
    (!config.iceServersStaticCredentials ||
      (config.turnSecret !== undefined && config.turnUrls === undefined)) &&
    config.iceServers.some(
      (server) => turnUrlsOf(server).length > 0 && server.credential !== undefined,
    )
  );
}
