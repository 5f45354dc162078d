import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from "kysely";
import type { QueryResultRow } from "pg";
import { dialectOf, type DialectName } from "./dialect.js";
import { pgPoolOf } from "./open-database.js";
import type { Database } from "./schema.js";

const SLOT = "\u0000parley-slot:";

/** Marks where a per-call value goes; typed as that value so the builder still type-checks. */
export type Slot<Args> = <K extends keyof Args & string>(name: K) => Args[K];

/**
 * A query built and compiled once per dialect, then run with fresh values: for the few queries
 * every ingest request runs, where building and compiling through Kysely cost more than SQLite
 * executing them. `build` marks each per-call value with `slot(name)`; everything else it writes
 * is fixed at the first call. Works on a Kysely instance or a transaction.
 */
export function compiledOnce<Row, Args extends Record<string, unknown>>(
  build: (db: Kysely<Database>, slot: Slot<Args>) => Compilable<Row>,
): (db: Kysely<Database>, args: Args) => Promise<QueryResult<Row>> {
  const byDialect = new Map<
    DialectName,
    { compiled: CompiledQuery<Row>; names: Array<string | undefined> }
  >();
  return (db, args) => {
    const dialect = dialectOf(db);
    let entry = byDialect.get(dialect);
    if (!entry) {
      const compiled = build(db, ((name: string) => SLOT + name) as Slot<Args>).compile();
      const names = compiled.parameters.map((value) =>
        typeof value === "string" && value.startsWith(SLOT) ? value.slice(SLOT.length) : undefined,
      );
      entry = { compiled, names };
      byDialect.set(dialect, entry);
    }
    const { compiled, names } = entry;
    const parameters = compiled.parameters.map((value, i) => {
      const name = names[i];
      return name === undefined ? value : args[name];
    });
    return db.executeQuery<Row>({ ...compiled, parameters });
  };
}

/**
 * Runs a PostgreSQL statement of fixed text (`$1`, `$2`, ... placeholders) as a named prepared
 * statement on the pg pool under `db` (`{ name, text, values }`, which Kysely cannot send):
 * PostgreSQL parses and plans it once per connection instead of at every call. Where `db` has no
 * pool of its own (a transaction, a Kysely instance opened elsewhere) the same text runs through
 * Kysely, unnamed.
 */
export async function executeNamed<Row>(
  db: Kysely<Database>,
  statement: { name: string; text: string; values: unknown[] },
): Promise<Row[]> {
  const pool = pgPoolOf(db);
  if (pool) return (await pool.query<Row & QueryResultRow>(statement)).rows;
  return (await db.executeQuery<Row>(CompiledQuery.raw(statement.text, statement.values))).rows;
}
