import fs from "node:fs";
import type { Readable } from "node:stream";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { AppError } from "../errors/app-error.js";
import { eventData, isoTime } from "../events/event-catalogue.js";
import { inTransaction } from "../events/in-transaction.js";
import { AntivirusUnavailableError } from "../safety/antivirus/antivirus-unavailable-error.js";
import { filesDir, receiveFile, removeQuietly, type ReceivedFile } from "./file-store.js";
import { roomForMember } from "./room-access.js";

export interface FileView {
  id: number;
  roomId: number;
  fileName: string;
  fileSize: number;
  fileType: string;
  sha256: string;
  /** The uploader's username (as in FILE_UPLOADED). */
  uploadedBy: string;
  createdAt: string;
}

export interface IncomingUpload {
  /** As the client named it; reduced to a safe base name here. */
  fileName: string;
  /** As the client declared it. */
  fileType: string;
  /** The bytes; `truncated` is set when the multipart parser cut it at the upload limit. */
  stream: Readable & { truncated?: boolean };
}

const MAX_NAME_CHARS = 255;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

/** The base name without directories or control characters, at most 255 characters. */
export function safeFileName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const base = (name.split(/[\\/]/).pop() ?? "").replace(/[\u0000-\u001f\u007f]/g, "").trim();
  const clipped = [...base].slice(0, MAX_NAME_CHARS).join("");
  return clipped === "" || clipped === "." || clipped === ".." ? "upload" : clipped;
}

function safeFileType(type: string): string {
  const trimmed = type.trim().toLowerCase();
  return MEDIA_TYPE.test(trimmed) && trimmed.length <= MAX_NAME_CHARS
    ? trimmed
    : "application/octet-stream";
}

/**
 * Stores an upload in a room. The bytes go to a temporary file; with a scanner (Enterprise) they
 * are scanned before anything is recorded. An infected file is deleted, FILE_INFECTION_DETECTED
 * is committed, and the caller gets 422 `file_infected`. A clean file is renamed into place inside
 * the transaction that writes its row and FILE_UPLOADED; if that transaction fails the file is
 * removed, so the disk never holds a file the database does not know.
 */
export async function uploadFile(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  upload: IncomingUpload,
): Promise<FileView> {
  const fileName = safeFileName(upload.fileName);
  const fileType = safeFileType(upload.fileType);
  const received = await receiveFile(filesDir(ctx.config.dataDir), upload.stream);
  try {
    if (upload.stream.truncated) {
      throw new AppError(
        "file_too_large",
        `the file is larger than the upload limit of ${ctx.config.maxUploadBytes} bytes`,
        {
          limit: ctx.config.maxUploadBytes,
        },
      );
    }
    await scanOrReject(ctx, actor, roomId, received, fileName, fileType);
    return await inTransaction(ctx, async (tx) => {
      // The room may have been deleted, or the uploader removed, while the bytes arrived.
      await roomForMember(tx.db, roomId, actor);
      const now = ctx.now();
      const row = await tx.db
        .insertInto("files")
        .values({
          room_id: roomId,
          uploaded_by: actor.userId,
          file_name: fileName,
          file_size: received.size,
          file_type: fileType,
          sha256: received.sha256,
          storage_key: received.storageKey,
          created_at: now,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      const view: FileView = {
        id: row.id,
        roomId,
        fileName,
        fileSize: received.size,
        fileType,
        sha256: received.sha256,
        uploadedBy: actor.username,
        createdAt: isoTime(now),
      };
      await tx.emit("FILE_UPLOADED", eventData.fileUploaded({ ...view, fileId: view.id }));
      await fs.promises.rename(received.tempPath, received.finalPath);
      return view;
    });
  } catch (error) {
    await removeQuietly(received.tempPath);
    await removeQuietly(received.finalPath);
    throw error;
  }
}

async function scanOrReject(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  received: ReceivedFile,
  fileName: string,
  fileType: string,
): Promise<void> {
  const scanner = ctx.safety.scanner;
  // Community edition: no antivirus, files are stored as uploaded.
  if (!scanner) return;
  let verdict;
  try {
    verdict = await scanner.scan(await fs.promises.readFile(received.tempPath));
  } catch (error) {
    // Fail closed: a file the scanner could not judge is not stored.
    if (error instanceof AntivirusUnavailableError) {
      throw new AppError(
        "antivirus_unavailable",
        "the antivirus scanner could not check the file; try again later",
      );
    }
    throw error;
  }
  if (!verdict.infected) return;
  await removeQuietly(received.tempPath);
  await inTransaction(ctx, async (tx) => {
    await tx.emit(
      "FILE_INFECTION_DETECTED",
      eventData.fileInfectionDetected({
        roomId,
        fileName,
        fileSize: received.size,
        fileType,
        sha256: received.sha256,
        signature: verdict.signature,
        scanner: verdict.scanner,
        uploadedBy: actor.username,
        scannedAt: ctx.now(),
      }),
    );
  });
  throw new AppError(
    "file_infected",
    `the ${verdict.scanner} scanner found ${verdict.signature}; the file was not stored`,
    {
      signature: verdict.signature,
    },
  );
}
