import crypto from "node:crypto";
import type { Kysely } from "kysely";
import { TokenService } from "./auth/token-service.js";
import type { Config } from "./config/load-config.js";
import { loadServerKeys, type ServerKeys } from "./config/server-keys.js";
import type { DialectName } from "./db/dialect.js";
import { migrate } from "./db/migrate.js";
import { openDatabase, type ParleyDatabase } from "./db/open-database.js";
import type { Database } from "./db/schema.js";
import { EventSpine } from "./events/event-spine.js";
import { createSafety, type Safety } from "./safety/create-safety.js";
import path from "node:path";

/**
 * Everything a domain service needs, built once per process (or per test) and passed explicitly:
 * no module-level singletons, so several apps can run side by side in one test process.
 */
export interface AppContext {
  readonly config: Config;
  readonly database: ParleyDatabase;
  readonly db: Kysely<Database>;
  readonly dialect: DialectName;
  readonly spine: EventSpine;
  readonly keys: ServerKeys;
  readonly tokens: TokenService;
  readonly safety: Safety;
  /** Identifies this process in delivery leases (`locked_by`). */
  readonly instanceId: string;
  now(): number;
}

export interface CreateAppContextOptions {
  /** Use this database instead of opening the one the config names (tests). */
  database?: ParleyDatabase;
  now?: () => number;
}

export async function createAppContext(
  config: Config,
  options: CreateAppContextOptions = {},
): Promise<AppContext> {
  const database =
    options.database ??
    openDatabase({
      databaseUrl: config.databaseUrl,
      sqlitePath: path.join(config.dataDir, "parley.db"),
    });
  await migrate(database.db);
  const keys = await loadServerKeys(config, database);
  const now = options.now ?? Date.now;
  return {
    config,
    database,
    db: database.db,
    dialect: database.dialect,
    spine: new EventSpine({
      dialect: database.dialect,
      db: database.db,
      outboundEnabled: config.edition === "enterprise",
      now,
    }),
    keys,
    tokens: new TokenService({
      secret: keys.jwtSecret,
      jwksUrl: config.jwtJwksUrl,
      issuer: config.jwtIssuer,
      audience: config.jwtAudience,
    }),
    safety: createSafety(config),
    instanceId: `${process.pid}-${crypto.randomBytes(4).toString("hex")}`,
    now,
  };
}
