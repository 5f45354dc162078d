import crypto from "node:crypto";
import type { TestApp, TestUser } from "../../helpers/build-app.js";

/** Multipart uploads for the files routes' tests. */
export interface Part {
  name: string;
  filename?: string;
  type?: string;
  data: string | Buffer;
}

export function multipart(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----parley${crypto.randomBytes(8).toString("hex")}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ""}\r\n`;
    chunks.push(Buffer.from(head), Buffer.from(part.data), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(chunks),
    headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  };
}

export function upload(
  t: TestApp,
  user: TestUser | undefined,
  roomId: number | string,
  parts: Part[],
) {
  const body = multipart(parts);
  return t.app.inject({
    method: "POST",
    url: `/api/rooms/${roomId}/files`,
    headers: { ...body.headers, ...(user ? user.headers : {}) },
    payload: body.payload,
  });
}

export const fileField = (
  data: string | Buffer,
  filename = "notes.txt",
  type = "text/plain",
): Part => ({
  name: "file",
  filename,
  type,
  data,
});
