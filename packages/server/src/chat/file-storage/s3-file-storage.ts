import fs from "node:fs";
import type { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { FileMissingError, type FileStorage } from "./file-storage.js";

/** PARLEY_FILES_S3_*: the bucket, and where and how to reach it. */
export interface S3StorageSettings {
  bucket: string;
  /** An S3-compatible service's address (MinIO, Ceph, R2...); unset: AWS for the region. */
  endpoint: string | undefined;
  region: string;
  /** Both or neither; neither: the AWS SDK's default credential chain (environment, profile, role). */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (most self-hosted services). */
  forcePathStyle: boolean;
}

/**
 * Files as objects `<key>` of one bucket, so every process reaches every upload. Bytes are
 * streamed both ways: an upload from its scanned temporary file (its length known, so one
 * PutObject without buffering), a download from the object's body straight into the reply.
 */
export function s3FileStorage(settings: S3StorageSettings): FileStorage & { client: S3Client } {
  const client = new S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    credentials:
      settings.accessKeyId !== undefined && settings.secretAccessKey !== undefined
        ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey }
        : undefined,
    // Checksums only where S3 requires them: since 3.729 the SDK adds CRC32 trailers to every
    // upload by default (aws-chunked encoding), which S3-compatible services that predate it
    // refuse. Integrity is Parley's own sha256, computed as the upload arrives.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const bucket = settings.bucket;
  return {
    client,
    description: `s3://${bucket}`,
    async store(key, localPath, size) {
      try {
        await client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: fs.createReadStream(localPath),
            ContentLength: size,
            ContentType: "application/octet-stream",
          }),
        );
      } finally {
        await fs.promises.rm(localPath, { force: true });
      }
    },
    async open(key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        // In Node.js the body is an http.IncomingMessage: a Readable.
        return answer.Body as Readable;
      } catch (error) {
        if (error instanceof NoSuchKey || (error as { name?: string }).name === "NoSuchKey")
          throw new FileMissingError(key);
        throw error;
      }
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
  };
}
