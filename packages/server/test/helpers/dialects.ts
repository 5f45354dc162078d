import crypto from "node:crypto";
import pg from "pg";
import { openDatabase, type ParleyDatabase } from "../../src/db/open-database.js";

/**
 * The databases every storage test runs on: SQLite always, PostgreSQL when
 * PARLEY_TEST_DATABASE_URL is set. Each `open()` gives a fresh, isolated database (a temp-less
 * in-memory SQLite, or a PostgreSQL schema of its own that `cleanup()` drops).
 */
export interface TestDialect {
  readonly name: "sqlite" | "postgres";
  open(options?: { sqlitePath?: string }): Promise<TestDatabase>;
}

export interface TestDatabase {
  readonly database: ParleyDatabase;
  /** Settings that point another process (a `parley serve` child) at the same database. */
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

export const TEST_DATABASE_URL = process.env.PARLEY_TEST_DATABASE_URL || undefined;

const sqlite: TestDialect = {
  name: "sqlite",
  async open(options = {}) {
    const database = openDatabase({ sqlitePath: options.sqlitePath ?? ":memory:" });
    return { database, env: {}, cleanup: () => database.close() };
  },
};

/** A schema name unique to this test: PostgreSQL identifiers, lowercase. */
function schemaName(): string {
  return `t_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`;
}

const postgres: TestDialect = {
  name: "postgres",
  async open() {
    const url = TEST_DATABASE_URL!;
    const schema = schemaName();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const database = openDatabase({ databaseUrl: url, pgSchema: schema, poolSize: 5 });
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

export const DIALECTS: readonly TestDialect[] = TEST_DATABASE_URL ? [sqlite, postgres] : [sqlite];
