import { Migrator, sql, type Kysely, type MigrationResult } from "kysely";
import { dialectOf } from "./dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import type { Database } from "./schema.js";

/** Brings the schema up to date. Safe to run from many processes at once (Kysely locks the table). */
export async function migrate(db: Kysely<Database>): Promise<MigrationResult[]> {
  // On PostgreSQL, name the schema explicitly: otherwise Kysely's check for the migration tables
  // matches them in ANY schema, and a database holding several Parley schemas breaks.
  let migrationTableSchema: string | undefined;
  if (dialectOf(db) === "postgres") {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema;
  }
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: "parley_migrations",
    migrationLockTableName: "parley_migrations_lock",
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return results ?? [];
    // Kysely looks for its tables with a catalog query over every schema; a schema dropped by
    // someone else at that moment fails it with 3F000 (seen when test suites run side by side).
    // Nothing was migrated yet: try again.
    if ((error as { code?: string }).code === "3F000" && attempt < 5) continue;
    throw error instanceof Error ? error : new Error(String(error));
  }
}
