import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The server's layering, checked on the source text.
 *
 * 1. Only the query layer builds queries: repositories (`*-repository.ts`), `src/db/` (the
 *    dialect seam, compiled statements, migrations), the event spine's fan-out
 *    (`src/events/event-spine.ts`) and the delivery engine's queue verbs, whose SQL stays in
 *    plain view beside its locking reasons (`src/webhooks/outbound/delivery-engine/`). Everywhere
 *    else, `kysely` may be imported for types only: a service names `Kysely<Database>` to pass a
 *    handle (the database or a transaction) on to a repository, and types cannot run a query.
 *    Opening a transaction (`db.transaction()`) is allowed: a unit of work belongs to the service
 *    that needs it, and the statements inside still come from repositories.
 * 2. Only the HTTP layer sees the web framework and the HTTP cursor codec: routes, route schemas,
 *    `src/http/`, `src/plugins/`, the app and the process, and the few preHandlers and hooks named
 *    below. Services take and return plain values; a route decodes `?cursor=` into an id and
 *    encodes the next one.
 * 3. Only `src/db/` asks which database it runs on. What SQLite and PostgreSQL do differently is
 *    a named primitive there (`db/dialect.ts`: row locks, the id column, whether the database is
 *    embedded; `db/job-lock.ts`, `db/free-space.ts`, `db/read-snapshot.ts`, ...), and a statement
 *    that is two texts on purpose (the delivery engine's claim and recording) keeps both in plain
 *    view beside its reasons and lets `byDialect` choose. A dialect branch is: a call of
 *    `dialectOf` or `pgPoolOf`; a comparison with a dialect name (`=== "postgres"`,
 *    `!== 'sqlite'`, `case "postgres":`); a table indexed by a dialect (`SQL[this.dialect]`); an
 *    `instanceof` of Kysely's PostgreSQL or SQLite adapter or dialect; the raw pg pool
 *    (`.pgPool`). Passing the dialect on (`ctx.dialect` as an argument) is not a branch, nor is a
 *    LISTEN connection's `pgConfig`, which the wake-up sources that need one take when there is
 *    one. DIALECT_EXCEPTIONS names the files allowed to branch, each with its reason; an exception
 *    that no longer branches fails too, so the list only shrinks.
 */
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");

const QUERY_LAYER: Array<(file: string) => boolean> = [
  (file) => file.endsWith("-repository.ts"),
  (file) => file.startsWith("db/"),
  (file) => file === "events/event-spine.ts",
  // The live stream's LISTEN/NOTIFY bus: a channel, not a table, beside the spine's own NOTIFY.
  (file) => file === "realtime/postgres-bus.ts",
  (file) => file.startsWith("webhooks/outbound/delivery-engine/"),
];

const HTTP_LAYER: Array<(file: string) => boolean> = [
  (file) => file.endsWith("-routes.ts") || file.endsWith("-schemas.ts"),
  (file) => file.startsWith("http/") || file.startsWith("plugins/"),
  (file) => file === "app.ts" || file === "server.ts",
  // preHandlers and a rate-limit store: they work on the request by nature.
  (file) => file === "auth/require-role.ts",
  // The session cookie's flags: set on the reply by the routes that sign in.
  (file) => file === "auth/session-cookie.ts",
  (file) => file === "webhooks/outbound/admin-api/require-enterprise.ts",
  (file) => file === "operations/require-metrics-token.ts",
  (file) => file === "webhooks/inbound/ingest-rate-limit.ts",
  // What every ingest route does with its request: the token's hash, raw body, replayable answer.
  (file) => file === "webhooks/inbound/ingest-request.ts",
];

/** The entry points of Kysely's query building (`sql` needs a value import, caught separately). */
const QUERY_BUILDING =
  /\.(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto|executeQuery)\s*[<(]/;

const WEB_FRAMEWORK = /^(fastify|fastify-plugin|@fastify\/.*)$/;

/** Files outside src/db/ that still branch on the dialect, and why. */
const DIALECT_EXCEPTIONS: Record<string, string> = {};

/** What asks which database the code runs on (see 3 above); `what` names it in the message. */
const DIALECT_BRANCHES: Array<{ pattern: RegExp; what: string }> = [
  { pattern: /\b(dialectOf|pgPoolOf)\s*\(/, what: "asks which database (%s)" },
  {
    pattern: /(?:[=!]==?\s*["'`](postgres|sqlite)["'`])|(?:["'`](postgres|sqlite)["'`]\s*[=!]==?)/,
    what: "compares with a dialect name (%s)",
  },
  { pattern: /\bcase\s+["'`](postgres|sqlite)["'`]\s*:/, what: "switches on a dialect name (%s)" },
  { pattern: /\[\s*((?:[\w$]+\??\.)*dialect)\s*\]/i, what: "indexes a table by a dialect (%s)" },
  {
    pattern: /\binstanceof\s+(PostgresAdapter|SqliteAdapter|PostgresDialect|SqliteDialect)\b/,
    what: "tests the Kysely dialect (%s)",
  },
  { pattern: /\.(pgPool)\b/, what: "runs on the raw pg pool (%s)" },
];

interface Import {
  from: string;
  typeOnly: boolean;
  line: number;
}

function lineOf(source: string, index: number): number {
  return source.slice(0, index).split("\n").length;
}

/** Block comments and whole-line comments blanked, so prose about queries is not code. */
function withoutComments(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, " "))
    .replace(/^\s*\/\/.*$/gm, (comment) => " ".repeat(comment.length));
}

function importsOf(source: string): Import[] {
  const found: Import[] = [];
  for (const m of source.matchAll(
    /\b(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s*["']([^"']+)["']/g,
  )) {
    const named = /^\{([\s\S]*)\}$/.exec(m[2]!.trim());
    const specifiers = named
      ? named[1]!
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
    const typeOnly =
      m[1] !== undefined ||
      (specifiers.length > 0 && specifiers.every((s) => s.startsWith("type ")));
    found.push({ from: m[3]!, typeOnly, line: lineOf(source, m.index) });
  }
  for (const m of source.matchAll(
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s+["']([^"']+)["']/gm,
  ))
    found.push({ from: (m[1] ?? m[2])!, typeOnly: false, line: lineOf(source, m.index) });
  return found;
}

/** Where a relative import points, relative to src/ ("http/pagination.js"); else the bare name. */
function target(file: string, from: string): string {
  if (!from.startsWith(".")) return from;
  return path
    .relative(SRC, path.resolve(SRC, path.dirname(file), from))
    .split(path.sep)
    .join("/");
}

function queryLayerViolations(file: string, source: string): string[] {
  const code = withoutComments(source);
  const problems: string[] = [];
  for (const imported of importsOf(code)) {
    if (imported.from === "kysely" && !imported.typeOnly)
      problems.push(
        `${file}:${imported.line} imports kysely values (types only outside the query layer)`,
      );
  }
  code.split("\n").forEach((text, i) => {
    const call = QUERY_BUILDING.exec(text);
    if (call)
      problems.push(`${file}:${i + 1} builds a query (.${call[1]}); move it to a repository`);
  });
  return problems;
}

function httpLayerViolations(file: string, source: string): string[] {
  const problems: string[] = [];
  for (const imported of importsOf(withoutComments(source))) {
    const to = target(file, imported.from);
    if (WEB_FRAMEWORK.test(to))
      problems.push(`${file}:${imported.line} imports ${to} outside the HTTP layer`);
    else if (to.startsWith("http/") || to.startsWith("plugins/"))
      problems.push(`${file}:${imported.line} imports src/${to} outside the HTTP layer`);
  }
  return problems;
}

function dialectBranches(file: string, source: string): string[] {
  const problems: string[] = [];
  withoutComments(source)
    .split("\n")
    .forEach((text, i) => {
      for (const { pattern, what } of DIALECT_BRANCHES) {
        const found = pattern.exec(text);
        if (!found) continue;
        const name = found.slice(1).find((group) => group !== undefined) ?? found[0];
        problems.push(
          `${file}:${i + 1} ${what.replace("%s", name)}; make it a primitive in src/db/`,
        );
      }
    });
  return problems;
}

function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [path.relative(SRC, full).split(path.sep).join("/")] : [];
  });
}

const files = sourceFiles();
const read = (file: string) => fs.readFileSync(path.join(SRC, file), "utf8");

describe("layering", () => {
  it("builds queries only in repositories, src/db/, the event spine and the delivery engine", () => {
    const outside = files.filter((file) => !QUERY_LAYER.some((inLayer) => inLayer(file)));
    expect(outside.length).toBeGreaterThan(50);
    expect(outside.flatMap((file) => queryLayerViolations(file, read(file)))).toEqual([]);
  });

  it("keeps the web framework and the HTTP cursor codec out of services and repositories", () => {
    const outside = files.filter((file) => !HTTP_LAYER.some((inLayer) => inLayer(file)));
    expect(outside).toContain("chat/messages-service.ts");
    expect(outside.flatMap((file) => httpLayerViolations(file, read(file)))).toEqual([]);
  });

  it("branches on the dialect only in src/db/ and the named exceptions", () => {
    const outside = files.filter((file) => !file.startsWith("db/"));
    expect(outside.length).toBeGreaterThan(50);
    expect(
      outside
        .filter((file) => !(file in DIALECT_EXCEPTIONS))
        .flatMap((file) => dialectBranches(file, read(file))),
    ).toEqual([]);
    // An exception that no longer branches (or no longer exists) is taken off the list.
    const stale = Object.keys(DIALECT_EXCEPTIONS).filter(
      (file) => !files.includes(file) || dialectBranches(file, read(file)).length === 0,
    );
    expect(stale).toEqual([]);
  });

  it("catches what it is meant to catch", () => {
    const service = [
      'import type { Kysely, Transaction } from "kysely";',
      'import { type Selectable } from "kysely";',
      '// ctx.db.selectFrom("users") in a comment is prose',
      'import { sql } from "kysely";',
      "await ctx.db",
      '  .selectFrom("users")',
      '  .where("id", "=", 1);',
      'await tx.db.insertInto("rooms").values(row).execute();',
      'import type { FastifyRequest } from "fastify";',
      'import { decodeCursor } from "../http/pagination.js";',
    ].join("\n");
    expect(queryLayerViolations("chat/x-service.ts", service)).toEqual([
      "chat/x-service.ts:4 imports kysely values (types only outside the query layer)",
      "chat/x-service.ts:6 builds a query (.selectFrom); move it to a repository",
      "chat/x-service.ts:8 builds a query (.insertInto); move it to a repository",
    ]);
    expect(httpLayerViolations("chat/x-service.ts", service)).toEqual([
      "chat/x-service.ts:9 imports fastify outside the HTTP layer",
      "chat/x-service.ts:10 imports src/http/pagination.js outside the HTTP layer",
    ]);
    const branching = [
      '// if (dialectOf(db) === "postgres") in a comment is prose',
      'if (dialectOf(db) === "postgres") return claimOnPostgres(db);',
      "const locked = ctx.dialect !== 'sqlite' ? select.forUpdate() : select;",
      'switch (connection.dialect) { case "sqlite": break; }',
      "const text = FAN_OUT_SQL[this.dialect];",
      "const postgres = db.getExecutor().adapter instanceof PostgresAdapter;",
      "await ctx.database.pgPool?.query({ name, text, values });",
      "const pool = pgPoolOf(db);",
      "const rows = await byDialect(db, CLAIM)(db, input);",
      "await lockCallId(tx.db, roomId, ctx.dialect);",
      'if (config.databaseUrl?.startsWith("postgres://")) usePg();',
    ].join("\n");
    expect(dialectBranches("chat/x-service.ts", branching)).toEqual([
      "chat/x-service.ts:2 asks which database (dialectOf); make it a primitive in src/db/",
      "chat/x-service.ts:2 compares with a dialect name (postgres); make it a primitive in src/db/",
      "chat/x-service.ts:3 compares with a dialect name (sqlite); make it a primitive in src/db/",
      "chat/x-service.ts:4 switches on a dialect name (sqlite); make it a primitive in src/db/",
      "chat/x-service.ts:5 indexes a table by a dialect (this.dialect); make it a primitive in src/db/",
      "chat/x-service.ts:6 tests the Kysely dialect (PostgresAdapter); make it a primitive in src/db/",
      "chat/x-service.ts:7 runs on the raw pg pool (pgPool); make it a primitive in src/db/",
      "chat/x-service.ts:8 asks which database (pgPoolOf); make it a primitive in src/db/",
    ]);
  });
});
