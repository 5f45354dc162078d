import { createHash } from "node:crypto";
import type { LookupFunction } from "node:net";
import { Agent, type Dispatcher } from "undici";
import { createConnector, type ClientTls } from "./create-connector.js";
import type { EgressProxy } from "./egress-proxy.js";

export interface OutboundAgentsOptions {
  /** Budget for DNS + TCP + TLS. */
  connectTimeoutMs: number;
  /** Budget for an attempt; undici's own header and body timers back it up. */
  timeoutMs: number;
  /** The SSRF-guarded lookup every new connection resolves with. */
  lookup: LookupFunction;
  /** Extra trusted CA certificates (PEM, PARLEY_WEBHOOK_CA_FILE). */
  ca?: string | Buffer | undefined;
  /** Cap on open connections per origin. Default: no cap. */
  connectionsPerOrigin?: number | undefined;
  /** The egress proxy every connection tunnels through (PARLEY_WEBHOOK_PROXY_URL). */
  proxy?: EgressProxy | undefined;
  /** Most TLS identities with a pool of their own at once. Default 256. */
  maxIdentities?: number;
}

/**
 * The connection pools of outbound requests, one undici Agent per TLS identity: endpoints without
 * a client certificate share one, and each distinct client certificate (with its key, passphrase
 * and CA) has its own. Keep-alive reuses a socket only within an Agent, so two endpoints with
 * different certificates never share a connection: a connection authenticated as one client is
 * never used for another. Identities are keyed by a hash of their settings, so endpoints with the
 * same certificate share a pool, and a changed certificate gets a fresh one.
 */
export class OutboundAgents {
  private readonly shared: Agent;
  private readonly byIdentity = new Map<string, Agent>();
  private readonly maxIdentities: number;
  private connections = 0;

  constructor(private readonly options: OutboundAgentsOptions) {
    this.maxIdentities = options.maxIdentities ?? 256;
    this.shared = this.agent(undefined);
  }

  /** New connections opened so far, all pools together (benchmarks, tests). */
  get connectionsOpened(): number {
    return this.connections;
  }

  /** The pool for requests made with this TLS identity (none: the shared pool). */
  for(tls: ClientTls | null | undefined): Dispatcher {
    if (tls === null || tls === undefined) return this.shared;
    const key = identityKey(tls);
    let agent = this.byIdentity.get(key);
    if (agent !== undefined) {
      // Most recently used last: the first entry is the one to let go when full.
      this.byIdentity.delete(key);
      this.byIdentity.set(key, agent);
      return agent;
    }
    if (this.byIdentity.size >= this.maxIdentities) {
      const [oldestKey, oldest] = this.byIdentity.entries().next().value as [string, Agent];
      this.byIdentity.delete(oldestKey);
      // Requests in flight on it finish first; its idle sockets close.
      void oldest.close().catch(() => undefined);
    }
    agent = this.agent(tls);
    this.byIdentity.set(key, agent);
    return agent;
  }

  async close(): Promise<void> {
    const agents = [this.shared, ...this.byIdentity.values()];
    this.byIdentity.clear();
    await Promise.all(agents.map((agent) => agent.close()));
    await this.options.proxy?.close();
  }

  private agent(clientTls: ClientTls | undefined): Agent {
    const { options } = this;
    const connect = createConnector({
      connectTimeoutMs: options.connectTimeoutMs,
      lookup: options.lookup,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      clientTls,
      proxy: options.proxy,
    });
    return new Agent({
      connect: (connectOptions, callback) => {
        this.connections++;
        connect(connectOptions, callback);
      },
      ...(options.connectionsPerOrigin === undefined
        ? {}
        : { connections: options.connectionsPerOrigin }),
      // The attempt's own timer governs; these only back it up.
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }
}

/** Keys of the settings objects seen (the dispatcher hands the same object for one ciphertext). */
const keys = new WeakMap<ClientTls, string>();

function identityKey(tls: ClientTls): string {
  let key = keys.get(tls);
  if (key === undefined) {
    key = hashOf(tls);
    keys.set(tls, key);
  }
  return key;
}

function hashOf(tls: ClientTls): string {
  return createHash("sha256")
    .update(JSON.stringify([tls.clientCertificatePem, tls.clientKeyPem, tls.passphrase, tls.caPem]))
    .digest("base64url");
}
