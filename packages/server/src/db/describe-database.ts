import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import type { Config } from "../config/load-config.js";

export interface DatabaseTarget {
  /** Where the database is, for people: a file path, or the PostgreSQL URL without its password. */
  where: string;
  /** Whether Parley has created it already (SQLite: the file exists; PostgreSQL: it is migrated). */
  exists: boolean;
}

/** Which database the config points at, and whether Parley has set it up already. */
export async function describeDatabase(config: Config): Promise<DatabaseTarget> {
  if (!config.databaseUrl) {
    const file = path.resolve(config.dataDir, "parley.db");
    return { where: file, exists: fs.existsSync(file) };
  }
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = "***";
  const client = new pg.Client({ connectionString: config.databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ found: string | null }>(
      "select to_regclass('parley_migrations')::text as found",
    );
    return { where: url.toString(), exists: result.rows[0]?.found != null };
  } finally {
    await client.end();
  }
}
