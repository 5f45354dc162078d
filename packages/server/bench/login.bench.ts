/**
 * Sign-in: what one password verify costs, and how many guesses the login rate limit lets through.
 *
 * 1. argon2id parameters: CPU time of one core per verify (process CPU time, so a busy machine
 *    does not inflate it the way wall time is) for a few candidate settings, and the ones Parley
 *    uses (src/auth/password-hashing.ts). Target: 50 to 150 ms.
 * 2. A password-guessing client against POST /api/auth/login with the default limits (5 failures
 *    a minute per username, 20 per address), for 10 simulated minutes at 10 guesses a second:
 *    from one address, and spread over 1,000 addresses. The app's clock is simulated (the limit
 *    reads `ctx.now()`), so ten minutes take the time of the guesses that are actually tried.
 *    Target: under 10 accepted guesses per minute per username, in every 60-second window.
 *
 *   npm run bench -w @parley/server            (all)
 *   npx tsx bench/login.bench.ts [--quick]     (this one; also PostgreSQL with PARLEY_TEST_DATABASE_URL)
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { hashSync, verifySync } from "@node-rs/argon2";
import pg from "pg";
import { createAppContext } from "../src/app-context.js";
import { buildApp } from "../src/app.js";
import { ARGON2_PARAMS } from "../src/auth/password-hashing.js";
import { setUserPassword } from "../src/auth/sign-in-service.js";
import { loadConfig } from "../src/config/load-config.js";
import { openDatabase, type DatabaseConnection } from "../src/db/open-database.js";

const CANDIDATES: Array<{ memoryCost: number; timeCost: number }> = [
  { memoryCost: 19_456, timeCost: 2 },
  { memoryCost: 47_104, timeCost: 1 },
  { memoryCost: 65_536, timeCost: 2 },
  { memoryCost: 65_536, timeCost: 3 },
  { memoryCost: ARGON2_PARAMS.memoryCost, timeCost: ARGON2_PARAMS.timeCost },
  { memoryCost: 131_072, timeCost: 3 },
];

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

export function measureArgon2(verifies: number): void {
  console.log(`argon2id, one lane, ${verifies} verifies each (CPU ms of one core; wall ms):`);
  const seen = new Set<string>();
  for (const { memoryCost, timeCost } of CANDIDATES) {
    const key = `${memoryCost}/${timeCost}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const params = { ...ARGON2_PARAMS, memoryCost, timeCost };
    const hash = hashSync("correct horse battery staple", params);
    const cpu: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i < verifies; i++) {
      const c = cpuMs();
      const w = performance.now();
      verifySync(hash, "correct horse battery staple");
      cpu.push(cpuMs() - c);
      wall.push(performance.now() - w);
    }
    const median = (values: number[]) =>
      values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const chosen =
      memoryCost === ARGON2_PARAMS.memoryCost && timeCost === ARGON2_PARAMS.timeCost
        ? "  <- Parley's"
        : "";
    const mark = median(cpu) >= 50 && median(cpu) <= 150 ? "in 50-150" : "outside";
    console.log(
      `  m=${String(memoryCost).padStart(6)} KiB t=${timeCost}: ${median(cpu).toFixed(1).padStart(6)} ms CPU, ` +
        `${median(wall).toFixed(1).padStart(6)} ms wall (median) ${mark}${chosen}`,
    );
  }
}

interface Guessing {
  tried: number;
  refused: number;
  perMinute: number;
  worstWindow: number;
}

/** One guesser for `minutes` simulated minutes at `rate` guesses a second. */
async function guess(
  database: DatabaseConnection,
  addresses: number,
  minutes: number,
  rate: number,
): Promise<Guessing> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-login-"));
  let clock = Date.now();
  const config = loadConfig(
    {},
    { dataDir, logLevel: "silent", masterKey: crypto.randomBytes(32).toString("hex") },
  );
  const ctx = await createAppContext(config, { database, now: () => clock });
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  const username = `victim${crypto.randomBytes(3).toString("hex")}`;
  const now = Date.now();
  await ctx.db
    .insertInto("users")
    .values({
      username,
      display_name: username,
      role: "user",
      status: "active",
      created_at: now,
      updated_at: now,
    })
    .execute();
  await setUserPassword(ctx, username, "the one right password");
  const acceptedAt: number[] = [];
  let refused = 0;
  const total = minutes * 60 * rate;
  for (let i = 0; i < total; i++) {
    clock += 1000 / rate;
    const res = await app.inject({
      method: "POST",
      url: "/api/auth/login",
      payload: { username, password: `guess ${i}` },
      remoteAddress: `10.${(i % addresses) >> 8}.${(i % addresses) & 255}.7`,
    });
    if (res.statusCode === 401) acceptedAt.push(clock);
    else if (res.statusCode === 429) refused++;
    else throw new Error(`unexpected ${res.statusCode}: ${res.body}`);
  }
  let worstWindow = 0;
  for (let i = 0, j = 0; i < acceptedAt.length; i++) {
    while (acceptedAt[i]! - acceptedAt[j]! >= 60_000) j++;
    worstWindow = Math.max(worstWindow, i - j + 1);
  }
  await app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { tried: acceptedAt.length, refused, perMinute: acceptedAt.length / minutes, worstWindow };
}

async function guessingOn(
  name: string,
  open: () => Promise<{ database: DatabaseConnection; cleanup(): Promise<void> }>,
  minutes: number,
): Promise<void> {
  for (const addresses of [1, 1000]) {
    const target = await open();
    try {
      const started = performance.now();
      const result = await guess(target.database, addresses, minutes, 10);
      console.log(
        `  ${name}, ${addresses === 1 ? "one address" : `${addresses} addresses`}: ${result.tried} guesses tried, ` +
          `${result.refused} refused (429) in ${minutes} simulated min at 10/s: ` +
          `${result.perMinute.toFixed(1)} guesses/min per username, at most ${result.worstWindow} in any 60 s ` +
          `(target < 10) [${((performance.now() - started) / 1000).toFixed(1)} s real]`,
      );
    } finally {
      await target.cleanup();
    }
  }
}

export async function runLoginBench(options: { quick?: boolean } = {}): Promise<void> {
  measureArgon2(options.quick ? 5 : 20);
  const minutes = options.quick ? 3 : 10;
  console.log(
    "password guessing against POST /api/auth/login (default limits 5/1m per username, 20/1m per address):",
  );
  await guessingOn(
    "SQLite",
    async () => {
      const database = openDatabase({ sqlitePath: ":memory:" });
      return { database, cleanup: () => database.close() };
    },
    minutes,
  );
  const url = process.env.PARLEY_TEST_DATABASE_URL;
  if (!url) {
    console.log("  PostgreSQL: skipped (PARLEY_TEST_DATABASE_URL is not set)");
    return;
  }
  await guessingOn(
    "PostgreSQL",
    async () => {
      const schema = `bench_${crypto.randomBytes(4).toString("hex")}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.end();
      const database = openDatabase({ databaseUrl: url, pgSchema: schema, poolSize: 4 });
      return {
        database,
        async cleanup() {
          await database.close();
          const client = new pg.Client({ connectionString: url });
          await client.connect();
          await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await client.end();
        },
      };
    },
    minutes,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await runLoginBench({ quick: process.argv.includes("--quick") });
}
