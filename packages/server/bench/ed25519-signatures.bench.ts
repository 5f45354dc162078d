/**
 * What signing with ed25519 costs per delivery against HMAC (docs/performance.md, "Ed25519
 * signatures"): drains of one endpoint, side by side in one run, on SQLite, to the same plain
 * receiver:
 *
 * - `standard-webhooks` (webhook-* headers, one `v1,` HMAC-SHA256 entry) against
 *   `standard-webhooks-ed25519` (the same headers, one `v1a,` ed25519 entry). Target: the ed25519
 *   drain >= 60% of HMAC's. Reported: the CPU of this process per delivery for each, and what one
 *   signature costs alone (node:crypto, the same message size), which is the floor of the gap.
 * - `standard-webhooks-ed25519` during a key rotation (two `v1a` entries), for the record.
 *
 * Each variant drains `events` deliveries queued while no dispatcher runs, `rounds` times in a
 * rotated order, after one unmeasured drain each; medians of the rates and of the CPU.
 *
 *   npx tsx packages/server/bench/ed25519-signatures.bench.ts [--quick] [--events N] [--rounds N]
 */
import { createHmac } from "node:crypto";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { sealSecret } from "../src/config/secret-box.js";
import { generateSigningKeyPair } from "../src/webhooks/outbound/generate-signing-key-pair.js";
import {
  signEd25519Webhook,
  signingKeyFrom,
} from "../src/webhooks/outbound/delivery-engine/sign-ed25519-webhook.js";
import { median, openSqliteTarget } from "./bench-targets.js";
import {
  addEndpoint,
  clock,
  emit,
  newDispatcher,
  SECRET,
  startReceiver,
} from "./delivery.bench.js";
import { inParallel } from "./in-parallel.js";
import { numberOption } from "./number-option.js";

export interface Ed25519Options {
  events: number;
  rounds: number;
}

const DEFAULTS: Ed25519Options = { events: 3_000, rounds: 5 };
const QUICK: Ed25519Options = { events: 1_000, rounds: 3 };

type Variant = "hmac" | "ed25519" | "rotating";
const VARIANTS: readonly Variant[] = ["hmac", "ed25519", "rotating"];
const LABELS: Record<Variant, string> = {
  hmac: "standard-webhooks (v1, HMAC-SHA256)",
  ed25519: "standard-webhooks-ed25519 (v1a)",
  rotating: "ed25519 during a rotation (2 x v1a)",
};

const pct = (value: number) => `${(value * 100).toFixed(0)}%`;

/** Microseconds per signature of one ~200-byte delivery, each way, node:crypto alone. */
function signatureCost(): { hmac: number; ed25519: number } {
  const body = Buffer.from(
    JSON.stringify({
      event: "ADMIN_USER_DISABLED",
      timestamp: new Date().toISOString(),
      webhookId: 1,
      data: { username: "bench-0000", adminActor: "bench" },
    }),
  );
  const key = signingKeyFrom(generateSigningKeyPair().privateKey);
  const n = 20_000;
  const time = (sign: () => void) => {
    for (let i = 0; i < 1_000; i++) sign();
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) sign();
    const { user, system } = process.cpuUsage(start);
    return (user + system) / n;
  };
  return {
    hmac: time(() =>
      createHmac("sha256", SECRET).update("evt_0.1700000000.").update(body).digest("base64"),
    ),
    ed25519: time(() => signEd25519Webhook(key, "evt_0", 1_700_000_000, body)),
  };
}

export async function runEd25519Bench(options: Ed25519Options = DEFAULTS): Promise<void> {
  const target = await openSqliteTarget();
  const { ctx } = target;
  const receiver = await startReceiver();
  const ids = {} as Record<Variant, number>;
  const seal = (text: string) => sealSecret(ctx.keys.secretKey, text);
  for (const variant of VARIANTS) {
    ids[variant] = await addEndpoint(ctx, receiver.url, SECRET);
    const pair = generateSigningKeyPair();
    await ctx.db
      .updateTable("webhooks")
      .set({
        enabled: 0,
        signature_scheme: variant === "hmac" ? "standard-webhooks" : "standard-webhooks-ed25519",
        signing_key_ciphertext: seal(pair.privateKey),
        public_key: pair.publicKey,
        ...(variant === "rotating"
          ? {
              previous_signing_key_ciphertext: seal(generateSigningKeyPair().privateKey),
              previous_signing_key_expires_at: Date.now() + 86_400_000,
            }
          : {}),
      })
      .where("id", "=", ids[variant])
      .execute();
  }

  const drains = new Map<Variant, Array<{ rate: number; cpuMicros: number }>>(
    VARIANTS.map((v) => [v, []]),
  );
  const drain = async (variant: Variant, round: number) => {
    // Only this variant's endpoint hears the events.
    await ctx.db.updateTable("webhooks").set({ enabled: 0 }).execute();
    await ctx.db
      .updateTable("webhooks")
      .set({ enabled: 1 })
      .where("id", "=", ids[variant])
      .execute();
    await inParallel(options.events, 16, (i) => emit(ctx, `${variant}-${round}-${i}`));
    const dispatcher = await newDispatcher(ctx);
    const base = receiver.count;
    const start = clock();
    const cpu = process.cpuUsage();
    dispatcher.start();
    await receiver.waitFor(base + options.events, 300_000);
    const rate = (options.events / (clock() - start)) * 1000;
    const { user, system } = process.cpuUsage(cpu);
    await dispatcher.stop();
    drains.get(variant)!.push({ rate, cpuMicros: (user + system) / options.events });
  };

  for (const variant of VARIANTS) await drain(variant, -1);
  for (const list of drains.values()) list.splice(0);
  for (let round = 0; round < options.rounds; round++) {
    const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
    if (round % 2 === 1) order.reverse();
    for (const variant of order) await drain(variant, round);
  }
  const cost = signatureCost();

  await receiver.close();
  await target.cleanup();

  const s = Object.fromEntries(
    VARIANTS.map((v) => {
      const list = drains.get(v)!;
      return [
        v,
        { rate: median(list.map((d) => d.rate)), cpu: median(list.map((d) => d.cpuMicros)) },
      ];
    }),
  ) as Record<Variant, { rate: number; cpu: number }>;
  console.log(
    `\ned25519 signatures (SQLite), medians of ${options.rounds} rounds of ${options.events} deliveries per drain`,
  );
  for (const v of VARIANTS)
    console.log(
      `  ${LABELS[v].padEnd(38)} ${s[v].rate.toFixed(0).padStart(6)} deliveries/s, CPU ${s[v].cpu.toFixed(0).padStart(4)} µs per delivery`,
    );
  console.log(
    `  one signature alone (node:crypto): HMAC-SHA256 ${cost.hmac.toFixed(1)} µs, ed25519 ${cost.ed25519.toFixed(1)} µs`,
  );
  const ratio = s.ed25519.rate / s.hmac.rate;
  console.log(
    `  ed25519 drain = ${pct(ratio)} of HMAC (target >= 60%) ${ratio >= 0.6 ? "met" : "MISSED"}; ` +
      `CPU +${(s.ed25519.cpu - s.hmac.cpu).toFixed(0)} µs per delivery (${pct(s.hmac.cpu / s.ed25519.cpu)} of HMAC's rate at equal CPU); ` +
      `rotating ${pct(s.rotating.rate / s.hmac.rate)} of HMAC`,
  );
}

export function ed25519OptionsFrom(values: {
  quick?: boolean | undefined;
  events?: string | undefined;
  rounds?: string | undefined;
}): Ed25519Options {
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
  await runEd25519Bench(ed25519OptionsFrom(values));
  process.exit(0);
}
