import crypto from "node:crypto";
import { TraceGate } from "./tracing/trace-gate.js";
import { hasTracedEndpoint } from "./webhooks/outbound/admin-api/endpoints-repository.js";
import { startOpenTelemetry, type Tracing } from "./tracing/open-telemetry.js";
import type { Kysely } from "kysely";
import { TokenService } from "./auth/token-service.js";
import { deleteExpiredIssuedTokens, insertIssuedToken } from "./auth/issued-tokens-repository.js";
import type { Config } from "./config/load-config.js";
import { loadServerKeys, reloadJwtKeys, type ServerKeys } from "./config/server-keys.js";
import type { DialectName } from "./db/dialect.js";
import { migrate } from "./db/migrate.js";
import { openDatabase, type DatabaseConnection } from "./db/open-database.js";
import type { Database } from "./db/schema.js";
import { withStartLock } from "./db/start-lock.js";
import { withUnitOfWork, type ParleyDatabase } from "./db/unit-of-work.js";
import { EventSpine } from "./events/event-spine.js";
import { createSafety, type Safety } from "./safety/create-safety.js";
import { createFileStorage } from "./chat/file-storage/create-file-storage.js";
import type { FileStorage } from "./chat/file-storage/file-storage.js";
import path from "node:path";
import { createSearchIndexer, type SearchIndexer } from "./search/search-indexer.js";

/**
 * Everything a domain service needs, built once per process (or per test) and passed explicitly:
 * no module-level singletons, so several apps can run side by side in one test process.
 */
export interface AppContext {
  readonly config: Config;
  /** The one way to write: `database.transaction(async (tx) => ...)` (db/unit-of-work.ts). */
  readonly database: ParleyDatabase;
  /** For reads outside a unit of work. */
  readonly db: Kysely<Database>;
  readonly dialect: DialectName;
  readonly spine: EventSpine;
  readonly keys: ServerKeys;
  readonly tokens: TokenService;
  readonly safety: Safety;
  /** Where uploads' bytes live: the data directory, or an S3-compatible bucket (PARLEY_FILES_S3_*). */
  readonly files: FileStorage;
  /** Identifies this process in delivery leases (`locked_by`). */
  readonly instanceId: string;
  /** OpenTelemetry export, when OTEL_EXPORTER_OTLP_ENDPOINT is set (tracing/open-telemetry.ts). */
  readonly tracing: Tracing | undefined;
  /** Whether requests carry their trace to the deliveries they cause (tracing/trace-gate.ts). */
  readonly traceGate: TraceGate;
  /** Adds new messages to the search index after their commit (search/search-indexer.ts). */
  readonly searchIndexer: SearchIndexer;
  now(): number;
}

export interface CreateAppContextOptions {
  /** Use this database instead of opening the one the config names (tests). */
  database?: DatabaseConnection;
  now?: () => number;
  /** Use this file storage instead of the one the config names (tests). */
  files?: FileStorage;
  /** Use this tracing instead of the one the environment asks for (tests). */
  tracing?: Tracing;
  /**
   * Runs after the migrations, under the same start lock (db/start-lock.ts): what one process
   * must do before another starting beside it looks (`parley serve` creates the first admin).
   */
  atStart?: (db: Kysely<Database>) => Promise<void>;
  /** Called when another process is starting on the same database and this one waits for it. */
  onStartWait?: () => void;
}

export async function createAppContext(
  config: Config,
  options: CreateAppContextOptions = {},
): Promise<AppContext> {
  let connection = options.database;
  if (connection) {
    await migrate(connection.db);
    await options.atStart?.(connection.db);
  } else {
    const location = {
      databaseUrl: config.databaseUrl,
      sqlitePath: path.join(config.dataDir, "parley.db"),
    };
    // Migrations run on a connection of their own, without the requests' time-out: building an
    // index on a large table may take longer, and must not fail the start for it. Processes
    // starting together take turns (start-lock.ts).
    await withStartLock(
      location,
      async () => {
        const migrating = openDatabase(location);
        try {
          await migrate(migrating.db);
          await options.atStart?.(migrating.db);
        } finally {
          await migrating.close();
        }
      },
      options.onStartWait,
    );
    connection = openDatabase({ ...location, timeoutMs: config.databaseTimeoutMs });
  }
  const keys = await loadServerKeys(config, connection);
  const now = options.now ?? Date.now;
  const instanceId = `${process.pid}-${crypto.randomBytes(4).toString("hex")}`;
  const tracing = options.tracing ?? (await startOpenTelemetry());
  const { spine, announce } = EventSpine.create({
    dialect: connection.dialect,
    db: connection.db,
    outboundEnabled: config.edition === "enterprise",
    instanceId,
    now,
  });
  const unitOfWork = withUnitOfWork(connection, spine, announce);
  const searchIndexer = createSearchIndexer(unitOfWork);
  spine.onEventCommitted((event) => {
    if (event === "MESSAGE_CREATED") searchIndexer.nudge();
  });
  return {
    config,
    database: {
      ...unitOfWork,
      // The indexer's timer and its run in flight end before the connection does.
      close: async () => {
        await searchIndexer.stop();
        await unitOfWork.close();
      },
    },
    db: connection.db,
    dialect: connection.dialect,
    spine,
    keys,
    tokens: new TokenService({
      keys: keys.jwtKeys,
      reloadKeys: () => reloadJwtKeys(config, connection),
      jwksUrl: config.jwtJwksUrl,
      recordIssued: async (issued) => {
        await deleteExpiredIssuedTokens(connection.db, issued.issuedAt);
        await insertIssuedToken(connection.db, issued);
      },
      issuer: config.jwtIssuer,
      audience: config.jwtAudience,
    }),
    safety: createSafety(config),
    files: options.files ?? (await createFileStorage(config)),
    instanceId,
    tracing,
    traceGate: new TraceGate(() => hasTracedEndpoint(connection.db), tracing !== undefined),
    searchIndexer,
    now,
  };
}
