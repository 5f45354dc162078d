import { sql, type Kysely } from "kysely";
import type { Database } from "../db/schema.js";

/** The readiness probe: the cheapest statement that needs a working connection. */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
