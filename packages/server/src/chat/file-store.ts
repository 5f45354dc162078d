import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

/** A file received into a temporary name under the data directory, not yet stored. */
export interface ReceivedFile {
  storageKey: string;
  tempPath: string;
  size: number;
  sha256: string;
}

/** Where uploads live: `<dataDir>/files/<random id>`. */
export function filesDir(dataDir: string): string {
  return path.join(dataDir, "files");
}

/**
 * Streams an upload to `<dir>/.incoming-<id>`, hashing and counting as it goes. The caller hands
 * it to the file storage (in the directory storage, a rename in the same directory: atomic) or
 * removes it.
 */
export async function receiveFile(dir: string, source: Readable): Promise<ReceivedFile> {
  // Uploads are for the room's members only: no other local user may read them.
  await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
  const storageKey = crypto.randomBytes(16).toString("hex");
  const tempPath = path.join(dir, `.incoming-${storageKey}`);
  const hash = crypto.createHash("sha256");
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(source, measure, fs.createWriteStream(tempPath, { flags: "wx", mode: 0o600 }));
  } catch (error) {
    await removeQuietly(tempPath);
    throw error;
  }
  return {
    storageKey,
    tempPath,
    size,
    sha256: hash.digest("hex"),
  };
}

export async function removeQuietly(file: string): Promise<void> {
  await fs.promises.rm(file, { force: true });
}
