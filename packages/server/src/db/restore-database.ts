import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { MIGRATIONS } from "./migrations/index.js";

/** Why a restore was refused, in words for the operator. */
export class RestoreRefused extends Error {}

export interface RestoreResult {
  /** Where the database it replaced was moved (undefined: there was none). */
  previous: string | undefined;
  /** The backup's last migration. */
  schema: string | undefined;
}

/** The migrations a backup has run, or a refusal when it is not a Parley database. */
function checkBackup(backup: string): string[] {
  if (!fs.existsSync(backup)) throw new RestoreRefused(`there is no file ${backup}`);
  let database: SQLite.Database;
  try {
    database = new SQLite(backup, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new RestoreRefused(`cannot open ${backup}: ${(error as Error).message}`);
  }
  try {
    let check: unknown;
    try {
      check = database.pragma("quick_check", { simple: true });
    } catch (error) {
      throw new RestoreRefused(`${backup} is not a SQLite database (${(error as Error).message})`);
    }
    if (check !== "ok") throw new RestoreRefused(`${backup} is damaged: ${String(check)}`);
    const table = database
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'parley_migrations'")
      .get();
    if (!table) throw new RestoreRefused(`${backup} is not a Parley database`);
    const names = (
      database.prepare("SELECT name FROM parley_migrations ORDER BY name").all() as {
        name: string;
      }[]
    ).map((row) => row.name);
    const unknown = names.filter((name) => !(name in MIGRATIONS));
    if (unknown.length > 0)
      throw new RestoreRefused(
        `${backup} was made by a newer version of Parley (migration ${unknown[0]} is unknown to ` +
          `this one): restore it with that version or a newer one`,
      );
    return names;
  } finally {
    database.close();
  }
}

/**
 * Takes the database at `target` out of WAL mode, which SQLite allows only to the one connection
 * open on it: a refusal means a server (or another command) has it open. Its write-ahead log is
 * folded into the file and removed, so the file is the whole database and can be moved aside.
 */
function takeOver(target: string): void {
  const database = new SQLite(target, { fileMustExist: true });
  try {
    database.pragma("busy_timeout = 0");
    try {
      database.pragma("journal_mode = DELETE");
    } catch (error) {
      if (!String((error as { code?: unknown }).code).startsWith("SQLITE_BUSY")) throw error;
      throw new RestoreRefused(
        `${target} is in use: stop every Parley process using it (systemctl stop parley), then ` +
          `restore again`,
      );
    }
    const mode = database.pragma("journal_mode", { simple: true });
    if (mode !== "delete")
      throw new RestoreRefused(
        `${target} is in use: stop every Parley process using it (systemctl stop parley), then ` +
          `restore again`,
      );
  } finally {
    database.close();
  }
}

/**
 * Replaces the SQLite database at `target` with the backup `backup` (made by `parley backup`, or
 * any copy of a Parley database): checks the backup (a SQLite database that passes
 * `quick_check`, made by this version of Parley or an older one), refuses while anything has
 * `target` open, copies the backup beside it, moves the current database aside as
 * `parley.db.before-restore-<time>` and puts the copy in its place. The next start migrates it if
 * it is older. The backup file itself is left as it was.
 */
export async function restoreDatabase(
  backup: string,
  target: string,
  now = new Date(),
): Promise<RestoreResult> {
  const migrations = checkBackup(path.resolve(backup));
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  const exists = fs.existsSync(target);
  if (exists) takeOver(target);
  const incoming = `${target}.restoring-${process.pid}`;
  fs.rmSync(incoming, { force: true });
  const source = new SQLite(backup, { readonly: true, fileMustExist: true });
  try {
    await source.backup(incoming, { progress: () => 0x7fffffff });
  } catch (error) {
    fs.rmSync(incoming, { force: true });
    throw error;
  } finally {
    source.close();
  }
  fs.chmodSync(incoming, 0o600);
  const fd = fs.openSync(incoming, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  let previous: string | undefined;
  if (exists) {
    previous = `${target}.before-restore-${now.toISOString().replace(/[:.]/g, "-")}`;
    fs.renameSync(target, previous);
  }
  for (const leftover of [`${target}-wal`, `${target}-shm`]) fs.rmSync(leftover, { force: true });
  fs.renameSync(incoming, target);
  return { previous, schema: migrations.at(-1) };
}
