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
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return results ?? [];
}
