import crypto from "node:crypto";
import pg from "pg";
import { describe } from "vitest";
import { openDatabase, type DatabaseConnection } from "../../src/db/open-database.js";
import { TEST_DATABASE_URL } from "./services.js";

export { TEST_DATABASE_URL };

/**
 * The databases every storage test runs on: SQLite and PostgreSQL (PARLEY_TEST_DATABASE_URL).
 * Each `open()` gives a fresh, isolated database (a temp-less in-memory SQLite, or a PostgreSQL
 * schema of its own that `cleanup()` drops).
 */
export interface TestDialect {
  readonly name: "sqlite" | "postgres";
  open(options?: OpenOptions): Promise<TestDatabase>;
}

export interface OpenOptions {
  /** SQLite: a file instead of memory. */
  sqlitePath?: string;
  /** The database time-out (PARLEY_DATABASE_TIMEOUT_MS); unset, none, as for the CLI. */
  timeoutMs?: number;
}

export interface TestDatabase {
  readonly database: DatabaseConnection;
  /** Settings that point another process (a `parley serve` child) at the same database. */
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

export const SQLITE: TestDialect = {
  name: "sqlite",
  async open(options = {}) {
    const database = openDatabase({
      sqlitePath: options.sqlitePath ?? ":memory:",
      timeoutMs: options.timeoutMs,
    });
    return { database, env: {}, cleanup: () => database.close() };
  },
};

/** A schema name unique to this test: PostgreSQL identifiers, lowercase. */
function schemaName(): string {
  return `t_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`;
}

export const POSTGRES: TestDialect = {
  name: "postgres",
  async open(options = {}) {
    const url = TEST_DATABASE_URL;
    if (url === undefined) throw new Error("PARLEY_TEST_DATABASE_URL is not set");
    const schema = schemaName();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const database = openDatabase({
      databaseUrl: url,
      pgSchema: schema,
      poolSize: 5,
      timeoutMs: options.timeoutMs,
    });
    const withSchema = new URL(url);
    withSchema.searchParams.set("options", `-c search_path=${schema}`);
    return {
      database,
      env: { DATABASE_URL: withSchema.toString() },
      async cleanup() {
        await database.close();
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      },
    };
  },
};

/**
 * `describeEachOf(dialects)(title, body)`: one describe() per dialect, titled with `$name`
 * replaced and tagged with the dialect's name. The tag is what counts the tests per database and
 * what skips the PostgreSQL copy (counted as skipped, never silently absent) when
 * PARLEY_TEST_DATABASE_URL is unset: see vitest.config.ts.
 */
export function describeEachOf(dialects: readonly TestDialect[]) {
  return (title: string, body: (dialect: TestDialect) => void): void => {
    for (const dialect of dialects) {
      describe(title.replaceAll("$name", dialect.name), { tags: [dialect.name] }, () =>
        body(dialect),
      );
    }
  };
}

/** Every storage test: `describeEachDialect("rooms on $name", (dialect) => { ... })`. */
export const describeEachDialect = describeEachOf([SQLITE, POSTGRES]);
