/**
 * The outside services some tests need, in one list: how a test run finds each one, and the vitest
 * tag that marks the tests needing it. vitest.config.ts skips a tag's tests when its service is
 * not configured here (allowed locally, listed in the run's summary); with CI=true the global
 * setup (scripts/vitest/global-setup.ts) fails the run instead, naming what is missing.
 *
 *   describe("LISTEN/NOTIFY wake-ups on postgres", { tags: ["postgres"] }, () => { ... });
 */
import fs from "node:fs";
import path from "node:path";

/** A CI run (CI=true): every service must be there and every test must run. */
export const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? "");

/** PostgreSQL for the second dialect of every storage test: a database the tests make schemas in. */
export const TEST_DATABASE_URL = process.env.PARLEY_TEST_DATABASE_URL || undefined;

/** Redis for the shared ingest rate limit. */
export const TEST_REDIS_URL = process.env.PARLEY_TEST_REDIS_URL || undefined;

/** The browser the admin UI tests drive (Debian's package; CI installs it). */
export const CHROMIUM_PATH = process.env.PARLEY_TEST_CHROMIUM || "/usr/bin/chromium";

/** Where initdb and pg_ctl are: $PG_BIN, else the newest /usr/lib/postgresql/<version>/bin. */
export function findPgBin(): string | undefined {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const root = "/usr/lib/postgresql";
  if (fs.existsSync(root)) {
    const versions = fs
      .readdirSync(root)
      .filter((name) => /^\d+(\.\d+)?$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) candidates.push(path.join(root, version, "bin"));
  }
  return candidates.find(
    (dir) => fs.existsSync(path.join(dir, "initdb")) && fs.existsSync(path.join(dir, "pg_ctl")),
  );
}

export type ServiceTag = "postgres" | "redis" | "chromium" | "postgres-binaries" | "root";

export interface TestService {
  /** The vitest tag of the tests that need it. */
  readonly tag: ServiceTag;
  /** What it is, for the summary and for error messages. */
  readonly description: string;
  /** Why it is not configured, or undefined when it is. Cheap and synchronous: read at config load. */
  missing(): string | undefined;
  /** Why a configured service does not answer, or undefined when it does (CI's global setup). */
  unreachable(): Promise<string | undefined>;
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

const answers = async () => undefined;

export const TEST_SERVICES: readonly TestService[] = [
  {
    tag: "postgres",
    description: "PostgreSQL, the second dialect of every storage test",
    missing: () =>
      TEST_DATABASE_URL ? undefined : "PARLEY_TEST_DATABASE_URL is not set (postgres://...)",
    async unreachable() {
      const { default: pg } = await import("pg");
      const client = new pg.Client({
        connectionString: TEST_DATABASE_URL,
        connectionTimeoutMillis: 5_000,
      });
      try {
        await client.connect();
        await client.query("SELECT 1");
        return undefined;
      } catch (error) {
        return `PostgreSQL at PARLEY_TEST_DATABASE_URL does not answer: ${(error as Error).message}`;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  },
  {
    tag: "redis",
    description: "Redis, the shared ingest rate limit",
    missing: () =>
      TEST_REDIS_URL ? undefined : "PARLEY_TEST_REDIS_URL is not set (redis://127.0.0.1:6379)",
    async unreachable() {
      const { Redis } = await import("ioredis");
      const client = new Redis(TEST_REDIS_URL!, {
        lazyConnect: true,
        enableOfflineQueue: false,
        connectTimeout: 2_000,
        retryStrategy: () => null,
      });
      // connect() rejects with "Connection is closed"; the error event says why.
      let cause: Error | undefined;
      client.on("error", (error: Error) => (cause ??= error));
      try {
        await client.connect();
        return (await client.ping()) === "PONG" ? undefined : "Redis did not answer PING";
      } catch (error) {
        return `Redis at PARLEY_TEST_REDIS_URL (${TEST_REDIS_URL}) does not answer: ${(cause ?? (error as Error)).message}`;
      } finally {
        client.disconnect();
      }
    },
  },
  {
    tag: "chromium",
    description: "Chromium, the admin UI and chat page browser tests",
    missing: () =>
      executable(CHROMIUM_PATH)
        ? undefined
        : `${CHROMIUM_PATH} is not an executable (apt-get install chromium, or set PARLEY_TEST_CHROMIUM)`,
    unreachable: answers,
  },
  {
    tag: "postgres-binaries",
    description: "PostgreSQL's initdb and pg_ctl, a private server the database-restart test owns",
    missing: () =>
      findPgBin()
        ? undefined
        : "initdb and pg_ctl not found in $PG_BIN or /usr/lib/postgresql/*/bin (apt-get install postgresql)",
    unreachable: answers,
  },
  {
    tag: "root",
    description: "root, to mount a small tmpfs the full-disk test fills (CI runs as root)",
    missing: () => (process.getuid?.() === 0 ? undefined : "the tests do not run as root (uid 0)"),
    async unreachable() {
      const { mountTmpfs } = await import("./tmpfs.js");
      try {
        const mounted = await mountTmpfs(1);
        await mounted.unmount();
        return undefined;
      } catch (error) {
        return `cannot mount a tmpfs: ${(error as Error).message}`;
      }
    },
  },
];
