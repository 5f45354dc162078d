import fs from "node:fs";
import path from "node:path";

/**
 * Below this many free bytes on the disk holding the SQLite database, it counts as full: /readyz
 * answers 503, and an I/O error on a write is taken for a full disk. Writes need some room for
 * the write-ahead log; with less than this, the next one may fail.
 */
export const LOW_FREE_SPACE_BYTES = 1024 * 1024;

/**
 * Bytes this process may still write on the file system holding `file` (root may also use the
 * blocks reserved for it), or undefined when that cannot be known (an in-memory database).
 */
export function freeSpaceFor(file: string): number | undefined {
  if (file === "" || file === ":memory:") return undefined;
  try {
    const stats = fs.statfsSync(path.dirname(file));
    const blocks = process.getuid?.() === 0 ? stats.bfree : stats.bavail;
    return blocks * stats.bsize;
  } catch {
    return undefined;
  }
}
