/**
 * What the server benchmarks open: a Parley context on SQLite (a file in a temp dir, as `parley
 * serve` uses it) or on PostgreSQL (in a schema of its own, dropped by cleanup()), and a room with
 * an integration posting into it through the real post path.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createAppContext, type AppContext } from "../src/app-context.js";
import { postMessage, type MessageSender } from "../src/chat/post-message.js";
import { loadConfig } from "../src/config/load-config.js";
import { openDatabase } from "../src/db/open-database.js";
import { createInboundWebhook } from "../src/webhooks/inbound/inbound-service.js";

export interface BenchTarget {
  name: "SQLite" | "PostgreSQL";
  ctx: AppContext;
  /** PostgreSQL: the schema it works in (another process may attach to it, see below). */
  schema?: string;
  cleanup(): Promise<void>;
}

/** The PostgreSQL database of the benchmarks, or undefined (then they run on SQLite only). */
export function benchDatabaseUrl(): string | undefined {
  return process.env.PARLEY_TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;
}

function benchConfig(dataDir: string, databaseUrl: string | undefined, masterKey?: string) {
  return loadConfig(
    {},
    {
      dataDir,
      databaseUrl,
      logLevel: "silent",
      webhookAllowHttp: true,
      webhookAllowPrivateNetworks: true,
      webhookTimeoutMs: 5_000,
      // PostgreSQL keeps generated keys in the database, wrapped by a master key from outside.
      masterKey: masterKey ?? crypto.randomBytes(32).toString("hex"),
    },
  );
}

export async function openSqliteTarget(): Promise<BenchTarget> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  const ctx = await createAppContext(benchConfig(dataDir, undefined));
  return {
    name: "SQLite",
    ctx,
    async cleanup() {
      await ctx.database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * PostgreSQL with the pool Parley opens by default (10 connections), in a schema of its own that
 * cleanup() drops. With `attach`, a second process's view of a schema another target made (its
 * master key unwraps the keys kept there); its cleanup() leaves the schema alone.
 */
export async function openPostgresTarget(
  url: string,
  attach?: { schema: string; masterKey: string },
): Promise<BenchTarget> {
  const schema = attach?.schema ?? `bench_${crypto.randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  if (!attach) await admin.query(`CREATE SCHEMA ${schema}`);
  const drop = async () => {
    if (!attach) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  try {
    const database = openDatabase({ databaseUrl: url, pgSchema: schema });
    const config = benchConfig(dataDir, url, attach?.masterKey);
    const ctx = await createAppContext(config, { database });
    return {
      name: "PostgreSQL",
      ctx,
      schema,
      async cleanup() {
        await ctx.database.close();
        await drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await drop();
    throw error;
  }
}

export async function openTargets(): Promise<Array<() => Promise<BenchTarget>>> {
  const url = benchDatabaseUrl();
  if (!url) console.log("(PostgreSQL skipped: set PARLEY_TEST_DATABASE_URL or DATABASE_URL)");
  return url ? [openSqliteTarget, () => openPostgresTarget(url)] : [openSqliteTarget];
}

/** A room and an integration (inbound webhook) that posts into it. */
export interface PostingRoom {
  roomId: number;
  sender: MessageSender;
}

export async function createPostingRoom(ctx: AppContext): Promise<PostingRoom> {
  const now = Date.now();
  const admin = await ctx.db
    .insertInto("users")
    .values({
      username: `bench-admin-${crypto.randomBytes(3).toString("hex")}`,
      display_name: "Admin",
      role: "admin",
      status: "active",
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const room = await ctx.db
    .insertInto("rooms")
    .values({
      name: `deploys-${crypto.randomBytes(3).toString("hex")}`,
      kind: "room",
      created_by: admin.id,
      deleted_at: null,
      created_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const hook = await createInboundWebhook(ctx, admin.id, { roomId: room.id, displayName: "CI" });
  return {
    roomId: room.id,
    sender: {
      type: "integration",
      inboundWebhookId: hook.id,
      displayName: "CI",
      avatarUrl: null,
    },
  };
}

export const POST_CONTENT =
  "Deploy finished: **api** v1.2.3 is live on `prod` ([run 4242](https://ci.example.com/runs/4242))";

/** One complete chat post (validation, DLP, moderation, message + MESSAGE_CREATED fan-out). */
export async function postOne(ctx: AppContext, room: PostingRoom): Promise<number> {
  const posted = await postMessage(ctx, {
    roomId: room.roomId,
    content: POST_CONTENT,
    sender: room.sender,
  });
  return posted.id;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
