import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Config } from "./load-config.js";
import type { ParleyDatabase } from "../db/open-database.js";

export interface ServerKeys {
  /** HS256 key of the tokens this server issues. */
  jwtSecret: Uint8Array;
  /** AES-256-GCM key that encrypts webhook secrets at rest. */
  secretKey: Buffer;
}

/**
 * The server's two keys: from configuration when set; otherwise generated once. On the embedded
 * SQLite install they live in the data dir beside the database (files readable only by the owner).
 * With PostgreSQL, processes on different hosts share no data dir, so generated keys are kept in
 * the database (`server_keys`), and every process reads the same ones.
 */
export async function loadServerKeys(
  config: Config,
  database: ParleyDatabase,
): Promise<ServerKeys> {
  const jwt = config.jwtSecret ?? (await generatedKey(config, database, "jwt-secret"));
  const secret = config.secretKey ?? (await generatedKey(config, database, "secret-key"));
  return { jwtSecret: new TextEncoder().encode(jwt), secretKey: Buffer.from(secret, "hex") };
}

async function generatedKey(
  config: Config,
  database: ParleyDatabase,
  name: string,
): Promise<string> {
  const fresh = crypto.randomBytes(32).toString("hex");
  if (database.dialect === "sqlite") {
    const file = path.join(config.dataDir, name);
    fs.mkdirSync(config.dataDir, { recursive: true });
    try {
      // "wx": never overwrite a key another process wrote first.
      fs.writeFileSync(file, fresh + "\n", { flag: "wx", mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    return fs.readFileSync(file, "utf8").trim();
  }
  await database.db
    .insertInto("server_keys")
    .values({ name, value: fresh, created_at: Date.now() })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const row = await database.db
    .selectFrom("server_keys")
    .select("value")
    .where("name", "=", name)
    .executeTakeFirstOrThrow();
  return row.value;
}
