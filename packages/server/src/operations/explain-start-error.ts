import path from "node:path";
import type { Config } from "../config/load-config.js";
import { ConfigError } from "../config/config-error.js";

interface ErrorFields {
  code?: unknown;
  syscall?: unknown;
  path?: unknown;
  hostname?: unknown;
  port?: unknown;
  message?: unknown;
}

/** The PostgreSQL server DATABASE_URL names, for people: host:port/database, never the password. */
function postgresTarget(databaseUrl: string): { where: string; user: string; database: string } {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, "")) || "(default)";
  return {
    where: `${url.hostname || "localhost"}:${url.port || "5432"}/${database}`,
    user: decodeURIComponent(url.username) || "(default)",
    database,
  };
}

const FILE_REASONS: Record<string, string> = {
  EACCES: `permission denied to the user running Parley (uid ${process.getuid?.() ?? "?"})`,
  EPERM: `permission denied to the user running Parley (uid ${process.getuid?.() ?? "?"})`,
  EROFS: "it is on a read-only file system",
  ENOTDIR: "part of the path is a file, not a directory",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
};

/**
 * What went wrong at start, in words an operator acts on: which setting to look at and what to
 * do, rather than a driver's message (`connect ECONNREFUSED 127.0.0.1:5432`). Errors it does not
 * recognise keep their own message.
 */
export function explainStartError(error: unknown, config: Config): string {
  if (error instanceof ConfigError) return `invalid configuration: ${error.message}`;
  const fields = (typeof error === "object" && error !== null ? error : {}) as ErrorFields;
  const code = typeof fields.code === "string" ? fields.code : undefined;
  const message = typeof fields.message === "string" ? fields.message : String(error);
  const pg = config.databaseUrl ? postgresTarget(config.databaseUrl) : undefined;

  // Listening.
  if (fields.syscall === "listen") {
    if (code === "EADDRINUSE")
      return (
        `port ${config.port} on ${config.host} is already in use (another Parley, or another ` +
        `program): stop it, or choose another port with PARLEY_PORT or --port`
      );
    if (code === "EACCES")
      return (
        `not allowed to listen on port ${config.port}: ports below 1024 need root or the ` +
        `CAP_NET_BIND_SERVICE capability. Use a port above 1023 behind a reverse proxy ` +
        `(docs/deployment.md)`
      );
    if (code === "EADDRNOTAVAIL")
      return `${config.host} is not an address of this machine: correct PARLEY_HOST or --host`;
  }

  // The data directory (SQLite, keys, uploads).
  const file = typeof fields.path === "string" ? fields.path : undefined;
  if (code && FILE_REASONS[code] && file && !path.relative(config.dataDir, file).startsWith(".."))
    return (
      `cannot write to the data directory ${config.dataDir}: ${FILE_REASONS[code]} (${file}). ` +
      `Make it writable by the user running Parley, or choose another with PARLEY_DATA_DIR or ` +
      `--data-dir`
    );
  const sqliteFile = path.join(config.dataDir, "parley.db");
  if (!pg && code?.startsWith("SQLITE_")) {
    if (code === "SQLITE_CANTOPEN" || code.startsWith("SQLITE_READONLY"))
      return (
        `cannot write the database ${sqliteFile} (${message}): make the data directory and its ` +
        `files writable by the user running Parley, or choose another with PARLEY_DATA_DIR`
      );
    if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT"))
      return (
        `${sqliteFile} is not a readable SQLite database (${message}): restore it from a backup ` +
        `(parley restore, docs/deployment.md)`
      );
    if (code === "SQLITE_FULL")
      return `the disk holding ${config.dataDir} is full: free some space, then start again`;
  }

  // PostgreSQL.
  if (pg) {
    const dbHost = new URL(config.databaseUrl!).hostname;
    if ((code === "ENOTFOUND" || code === "EAI_AGAIN") && fields.hostname === dbHost)
      return `cannot find the PostgreSQL host "${dbHost}" of DATABASE_URL (its name does not resolve): correct DATABASE_URL`;
    if (code === "ECONNREFUSED")
      return (
        `nothing accepts connections at ${pg.where.split("/")[0]}, where DATABASE_URL points: ` +
        `is PostgreSQL running, on that host and port?`
      );
    if (code === "ETIMEDOUT" || code === "EHOSTUNREACH" || /timeout/i.test(message))
      return `PostgreSQL at ${pg.where.split("/")[0]} (DATABASE_URL) did not answer: is the host reachable from here (firewall, network)?`;
    if (code === "3D000")
      return (
        `the database "${pg.database}" does not exist on ${pg.where.split("/")[0]}: create it ` +
        `(createdb ${pg.database}) or correct DATABASE_URL`
      );
    if (code === "28P01")
      return `PostgreSQL refused the password of the user "${pg.user}" (DATABASE_URL)`;
    if (code === "28000")
      return `PostgreSQL refused the connection as "${pg.user}" to ${pg.where} (${message}): check the user in DATABASE_URL and the server's pg_hba.conf`;
    if (code === "42501")
      return `the PostgreSQL user "${pg.user}" may not create tables in ${pg.where} (${message}): use the database's owner, or grant it CREATE on the schema`;
    if (/does not support SSL/i.test(message))
      return `PostgreSQL at ${pg.where.split("/")[0]} does not accept SSL: remove sslmode from DATABASE_URL, or turn SSL on at the server`;
  }

  // The schema.
  const missing = /previously executed migration (\S+) is missing/.exec(message);
  if (missing)
    return (
      `the database was migrated by a newer version of Parley (it has migration ${missing[1]}, ` +
      `which this version does not know): run that version or a newer one, or restore a backup ` +
      `taken before the upgrade (docs/deployment.md#upgrades)`
    );
  return message;
}
