import { Migrator, type Kysely, type MigrationResult } from "kysely";
import { MIGRATIONS } from "./migrations/index.js";
import type { Database } from "./schema.js";

/** Brings the schema up to date. Safe to run from many processes at once (Kysely locks the table). */
export async function migrate(db: Kysely<Database>): Promise<MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: "parley_migrations",
    migrationLockTableName: "parley_migrations_lock",
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return results ?? [];
}
