import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";

export interface BackupResult {
  /** The backup's size. */
  bytes: number;
  /** How long it took, verification included. */
  ms: number;
}

/**
 * An online backup of the SQLite database at `source` into `target`, while servers keep writing
 * to it: SQLite's backup API (better-sqlite3's `backup()`) copies every page in one step, inside
 * one read transaction, so the copy is the database as it was at one instant: every write
 * committed before that instant is in it, none after. In WAL mode the read transaction does not
 * hold up the writers. (Copied a step at a time, a write by another process would restart the
 * copy, and under steady writes it might never finish.)
 *
 * The copy is written beside `target` under a temporary name, checked (`PRAGMA quick_check`),
 * made private (0600: it holds webhook secrets, sealed, and password hashes) and flushed to disk,
 * then renamed to `target`, so a backup cut short never looks complete.
 */
export async function backupDatabase(source: string, target: string): Promise<BackupResult> {
  const started = performance.now();
  const temporary = path.join(
    path.dirname(target),
    `.${path.basename(target)}.partial-${process.pid}`,
  );
  const database = new SQLite(source, { fileMustExist: true });
  try {
    database.pragma("busy_timeout = 10000");
    fs.rmSync(temporary, { force: true });
    await database.backup(temporary, { progress: () => 0x7fffffff });
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  } finally {
    database.close();
  }
  try {
    fs.chmodSync(temporary, 0o600);
    const copy = new SQLite(temporary, { fileMustExist: true });
    try {
      const check = copy.pragma("quick_check", { simple: true });
      if (check !== "ok") throw new Error(`the copy failed its check: ${String(check)}`);
      // A standalone file: no write-ahead log beside it to lose.
      copy.pragma("journal_mode = DELETE");
    } finally {
      copy.close();
    }
    const fd = fs.openSync(temporary, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temporary, target);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  return { bytes: fs.statSync(target).size, ms: performance.now() - started };
}
