import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { FileMissingError, type FileStorage } from "./file-storage.js";

/**
 * Files under `<dir>/<key>` (the default: `<PARLEY_DATA_DIR>/files`). receiveFile writes the
 * upload into the same directory, so storing it is an atomic rename.
 */
export function directoryFileStorage(dir: string): FileStorage {
  return {
    description: `data directory (${dir})`,
    async store(key, localPath) {
      try {
        await fs.promises.rename(localPath, path.join(dir, key));
      } catch (error) {
        await fs.promises.rm(localPath, { force: true });
        throw error;
      }
    },
    async open(key) {
      const stream: Readable = fs.createReadStream(path.join(dir, key));
      // Opening is asynchronous: wait for it, so a missing file is an error here, not mid-reply.
      await new Promise<void>((resolve, reject) => {
        stream.once("open", () => resolve());
        stream.once("error", (error: NodeJS.ErrnoException) =>
          reject(error.code === "ENOENT" ? new FileMissingError(key) : error),
        );
      });
      return stream;
    },
    async remove(key) {
      await fs.promises.rm(path.join(dir, key), { force: true });
    },
  };
}
