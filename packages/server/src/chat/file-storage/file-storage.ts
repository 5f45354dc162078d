import type { Readable } from "node:stream";

/**
 * Where the bytes of uploads live, by storage key (the `files.storage_key` column): the data
 * directory (one process, or processes sharing a disk) or an S3-compatible bucket (processes on
 * several hosts sharing PostgreSQL). The database is the index: a row exists only for bytes that
 * were stored first, and bytes are removed only after their row is gone.
 */
export interface FileStorage {
  /** Where the bytes go, for logs and the start-up line: "data directory" or "s3://bucket". */
  readonly description: string;
  /**
   * Makes the complete, scanned file at `localPath` (written by receiveFile under the data
   * directory) the stored object `key`; `localPath` is gone afterwards, whether or not this
   * succeeded.
   */
  store(key: string, localPath: string, size: number): Promise<void>;
  /** The bytes of `key`, as a stream; throws FileMissingError when there is no such object. */
  open(key: string): Promise<Readable>;
  /** Removes `key`; removing a key that is not there is not an error. */
  remove(key: string): Promise<void>;
}

/** The storage has no object for a key the database names. */
export class FileMissingError extends Error {
  constructor(readonly key: string) {
    super(`the file storage has no object ${key}`);
    this.name = "FileMissingError";
  }
}
