/**
 * What authenticating to receivers costs per delivery (docs/performance.md, "Outbound for
 * enterprise receivers"): drains of one endpoint, side by side in one run, on SQLite:
 *
 * - OAuth 2.0 client credentials against a static bearer token, both to the same plain receiver:
 *   with the token cached (fetched in the unmeasured first drain), what is left is the cache
 *   look-up. Target: >= 90% of bearer.
 * - mutual TLS against plain TLS, each to an HTTPS receiver in a process of its own (the mTLS one
 *   requires a client certificate signed by its CA): connections are kept alive per TLS identity,
 *   so the handshakes, where a client certificate costs, happen once per connection. Target:
 *   >= 70% of TLS.
 *
 * Each variant drains `events` deliveries queued while no dispatcher runs, `rounds` times in a
 * rotated order; medians of the rates and of this process's CPU per delivery. One sender serves
 * every drain, as in a long-running process (each drain has a dispatcher of its own): the token
 * cache and the connection pools carry over. Token requests and new connections are counted by
 * the sender over the measured drains and given per 10,000 deliveries.
 *
 *   npx tsx packages/server/bench/enterprise-receivers.bench.ts [--quick] [--events N] [--rounds N]
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { sealSecret } from "../src/config/secret-box.js";
import { createMetrics } from "../src/operations/metrics.js";
import { createDispatcher } from "../src/webhooks/outbound/delivery-engine/create-dispatcher.js";
import { createDeliveryMetrics } from "../src/webhooks/outbound/delivery-engine/delivery-metrics.js";
import type { StoredAuth } from "../src/webhooks/outbound/endpoint-auth.js";
import type { ClientTls } from "../src/webhooks/outbound/transport/create-connector.js";
import {
  createWebhookSender,
  type WebhookSender,
} from "../src/webhooks/outbound/transport/webhook-sender.js";
import { startTokenServer } from "../test/helpers/oauth2-token-server.js";
import { createTestPki } from "../test/helpers/test-pki.js";
import { median, openSqliteTarget } from "./bench-targets.js";
import { addEndpoint, clock, emit, startReceiver, type Receiver } from "./delivery.bench.js";
import { inParallel } from "./in-parallel.js";
import { numberOption } from "./number-option.js";

export interface EnterpriseReceiversOptions {
  events: number;
  rounds: number;
}

const DEFAULTS: EnterpriseReceiversOptions = { events: 3_000, rounds: 5 };
const QUICK: EnterpriseReceiversOptions = { events: 1_000, rounds: 3 };

type Variant = "bearer" | "oauth2" | "tls" | "mtls";
const VARIANTS: readonly Variant[] = ["bearer", "oauth2", "tls", "mtls"];

interface Drain {
  rate: number;
  cpuMicros: number;
  tokenRequests: number;
  connections: number;
}

const pct = (value: number) => `${(value * 100).toFixed(0)}%`;
const per10k = (count: number, deliveries: number) => ((count / deliveries) * 10_000).toFixed(1);

export async function runEnterpriseReceiversBench(
  options: EnterpriseReceiversOptions = DEFAULTS,
): Promise<void> {
  const target = await openSqliteTarget();
  const { ctx } = target;
  const pki = createTestPki();
  const client = pki.client("parley-bench");
  const tokens = await startTokenServer();
  const plain = await startReceiver();
  const tls = await startReceiver({ key: pki.server.key, cert: pki.server.cert });
  const mtls = await startReceiver({
    key: pki.server.key,
    cert: pki.server.cert,
    ca: pki.ca.cert,
    requestCert: true,
    rejectUnauthorized: true,
  });
  const seal = (value: object) => sealSecret(ctx.keys.secretKey, JSON.stringify(value));
  const bearer: StoredAuth = { type: "bearer", token: "bench-static-token-0123456789" };
  const oauth2: StoredAuth = {
    type: "oauth2",
    tokenUrl: tokens.tokenUrl,
    clientId: "bench",
    clientSecret: "bench-client-secret",
    scope: "webhooks.write",
    audience: null,
  };
  const clientTls: ClientTls = {
    clientCertificatePem: client.cert,
    clientKeyPem: client.key,
    passphrase: null,
    caPem: null,
  };
  const receivers: Record<Variant, Receiver> = { bearer: plain, oauth2: plain, tls, mtls };
  const ids = {} as Record<Variant, number>;
  for (const variant of VARIANTS) {
    ids[variant] = await addEndpoint(ctx, receivers[variant].url, "bench-secret-0123456789");
    await ctx.db
      .updateTable("webhooks")
      .set({
        enabled: 0,
        auth_ciphertext:
          variant === "bearer" ? seal(bearer) : variant === "oauth2" ? seal(oauth2) : null,
        tls_ciphertext: variant === "mtls" ? seal(clientTls) : null,
      })
      .where("id", "=", ids[variant])
      .execute();
  }

  // One sender for the whole run, as in a long-running process: its token cache and its
  // connection pools outlive each drain's dispatcher (whose stop would close them).
  const sender = createWebhookSender({
    timeoutMs: 5_000,
    allowHttp: true,
    allowPrivateNetworks: true,
    // The CA of the receivers' certificate, as PARLEY_WEBHOOK_CA_FILE would give it.
    ca: pki.ca.cert,
  });
  const kept: WebhookSender = {
    send: (request) => sender.send(request),
    close: async () => undefined,
  };
  const drains = new Map<Variant, Drain[]>(VARIANTS.map((v) => [v, []]));
  const drain = async (variant: Variant, round: number) => {
    // Only this variant's endpoint hears the events.
    await ctx.db.updateTable("webhooks").set({ enabled: 0 }).execute();
    await ctx.db
      .updateTable("webhooks")
      .set({ enabled: 1 })
      .where("id", "=", ids[variant])
      .execute();
    await inParallel(options.events, 16, (i) => emit(ctx, `${variant}-${round}-${i}`));
    const dispatcher = createDispatcher(
      ctx,
      createDeliveryMetrics(ctx.db, createMetrics().registry, ctx.now),
      { sender: kept },
    );
    const before = sender.stats!();
    const receiver = receivers[variant];
    const base = receiver.count;
    const start = clock();
    const cpu = process.cpuUsage();
    dispatcher.start();
    await receiver.waitFor(base + options.events, 300_000);
    const rate = (options.events / (clock() - start)) * 1000;
    const { user, system } = process.cpuUsage(cpu);
    const after = sender.stats!();
    await dispatcher.stop();
    drains.get(variant)!.push({
      rate,
      cpuMicros: (user + system) / options.events,
      tokenRequests: after.tokenRequests - before.tokenRequests,
      connections: after.connections - before.connections,
    });
  };

  // A first drain of each, unmeasured: connections, JIT, the token server's keys.
  for (const variant of VARIANTS) await drain(variant, -1);
  const cold = new Map([...drains].map(([variant, list]) => [variant, list.splice(0)[0]!]));
  for (let round = 0; round < options.rounds; round++) {
    const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
    if (round % 2 === 1) order.reverse();
    for (const variant of order) await drain(variant, round);
  }

  await sender.close();
  await Promise.all([plain.close(), tls.close(), mtls.close(), tokens.close()]);
  await target.cleanup();

  const summary = (variant: Variant) => {
    const list = drains.get(variant)!;
    const deliveries = list.length * options.events;
    return {
      rate: median(list.map((d) => d.rate)),
      cpu: median(list.map((d) => d.cpuMicros)),
      tokens: per10k(
        list.reduce((sum, d) => sum + d.tokenRequests, 0),
        deliveries,
      ),
      connections: per10k(
        list.reduce((sum, d) => sum + d.connections, 0),
        deliveries,
      ),
    };
  };
  const s = Object.fromEntries(VARIANTS.map((v) => [v, summary(v)])) as Record<
    Variant,
    ReturnType<typeof summary>
  >;
  console.log(
    `\nenterprise receivers (SQLite), medians of ${options.rounds} rounds of ${options.events} deliveries per drain, 16 in flight`,
  );
  const line = (label: string, v: Variant, extra: string) =>
    console.log(
      `  ${label.padEnd(34)} ${s[v].rate.toFixed(0).padStart(6)} deliveries/s, CPU ${s[v].cpu.toFixed(0).padStart(4)} µs per delivery; ${extra}`,
    );
  const first = (v: Variant) =>
    `(first drain, cold: ${cold.get(v)!.tokenRequests} token request(s), ${cold.get(v)!.connections} connection(s), ${cold.get(v)!.rate.toFixed(0)}/s)`;
  line("bearer token", "bearer", `token requests per 10,000 deliveries: ${s.bearer.tokens}`);
  line(
    "OAuth 2.0 client credentials",
    "oauth2",
    `token requests per 10,000 deliveries: ${s.oauth2.tokens} ${first("oauth2")}`,
  );
  line("TLS", "tls", `new connections per 10,000 deliveries: ${s.tls.connections} ${first("tls")}`);
  line(
    "mutual TLS (client certificate)",
    "mtls",
    `new connections per 10,000 deliveries: ${s.mtls.connections} ${first("mtls")}`,
  );
  const oauth = s.oauth2.rate / s.bearer.rate;
  const mutual = s.mtls.rate / s.tls.rate;
  console.log(
    `  OAuth 2.0 drain = ${pct(oauth)} of bearer (target >= 90%) ${oauth >= 0.9 ? "met" : "MISSED"}; ` +
      `CPU ${pct(s.bearer.cpu / s.oauth2.cpu)} of bearer's rate at equal CPU`,
  );
  console.log(
    `  mTLS drain = ${pct(mutual)} of TLS (target >= 70%) ${mutual >= 0.7 ? "met" : "MISSED"}; ` +
      `CPU ${pct(s.tls.cpu / s.mtls.cpu)} of TLS's rate at equal CPU`,
  );
}

export function enterpriseReceiversOptionsFrom(values: {
  quick?: boolean | undefined;
  events?: string | undefined;
  rounds?: string | undefined;
}): EnterpriseReceiversOptions {
  const base = values.quick ? QUICK : DEFAULTS;
  return {
    events: numberOption(values.events, base.events),
    rounds: numberOption(values.rounds, base.rounds),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { quick: { type: "boolean" }, events: { type: "string" }, rounds: { type: "string" } },
  });
  await runEnterpriseReceiversBench(enterpriseReceiversOptionsFrom(values));
  process.exit(0);
}
