import type { Config } from "../../config/load-config.js";
import { filesDir } from "../file-store.js";
import { directoryFileStorage } from "./directory-file-storage.js";
import type { FileStorage } from "./file-storage.js";

/**
 * The storage the settings name: the bucket when PARLEY_FILES_S3_BUCKET is set, else the data
 * directory. The AWS SDK is loaded only for a bucket (it adds a third to the server's start-up
 * imports).
 */
export async function createFileStorage(config: Config): Promise<FileStorage> {
  if (config.filesS3Bucket === undefined) return directoryFileStorage(filesDir(config.dataDir));
  const { s3FileStorage } = await import("./s3-file-storage.js");
  return s3FileStorage({
    bucket: config.filesS3Bucket,
    endpoint: config.filesS3Endpoint,
    region: config.filesS3Region,
    accessKeyId: config.filesS3AccessKeyId,
    secretAccessKey: config.filesS3SecretAccessKey,
    forcePathStyle: config.filesS3ForcePathStyle,
  });
}
