import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import type { ConfigOverrides } from "../../src/config/load-config.js";

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: Array<{ name: string }>;
}) => S3rverInstance;

// s3rver ships no types: the little of it used here, typed above.
const S3rver = createRequire(import.meta.url)("s3rver") as S3rverClass;

/** A real S3-compatible server (s3rver) on loopback with one empty bucket, and the settings that use it. */
export interface TestS3 {
  readonly bucket: string;
  readonly endpoint: string;
  /** PARLEY_FILES_S3_* for createTestApp / loadConfig. */
  readonly settings: ConfigOverrides;
  /** The keys of the objects in the bucket, sorted (read through the S3 API). */
  objects(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startS3(bucket = "parley-files"): Promise<TestS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "parley-s3-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  });
  return {
    bucket,
    endpoint,
    settings: {
      filesS3Bucket: bucket,
      filesS3Endpoint: endpoint,
      filesS3Region: "us-east-1",
      // s3rver's fixed credentials.
      filesS3AccessKeyId: "S3RVER",
      filesS3SecretAccessKey: "S3RVER",
      filesS3ForcePathStyle: true,
    },
    async objects() {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (listed.Contents ?? []).map((object) => object.Key!).sort();
    },
    async close() {
      client.destroy();
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
