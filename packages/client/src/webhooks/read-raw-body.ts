import type { IncomingMessage } from "node:http";

/** Deliveries are small JSON envelopes; anything near this is not one. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Thrown when a body is larger than the receiver accepts. */
export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
}

/**
 * Reads the whole body of `req` as bytes, refusing more than `limit` bytes. The rest of a refused
 * body is drained, not destroyed, so the socket can still carry the 413.
 */
export function readRawBody(req: IncomingMessage, limit = DEFAULT_MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(new BodyTooLargeError(`the body is larger than ${limit} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(new BodyTooLargeError(`the body is larger than ${limit} bytes`));
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
