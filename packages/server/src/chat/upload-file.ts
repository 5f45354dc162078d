import fs from "node:fs";
import type { Readable } from "node:stream";
import type { UploadedFile } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { AppError } from "../errors/app-error.js";
import { eventData, isoTime } from "../events/event-catalogue.js";
import { AntivirusUnavailableError } from "../safety/antivirus/antivirus-unavailable-error.js";
import { CONTROL_CHARACTER } from "./content-rules.js";
import { insertFileRow } from "./files-repository.js";
import { filesDir, receiveFile, removeQuietly, type ReceivedFile } from "./file-store.js";
import { roomForMember } from "./room-access.js";

/** A stored file as the API shows it: the wire's UploadedFile. */
export type FileView = UploadedFile;

export interface IncomingUpload {
  /** As the client named it; reduced to a safe base name here. */
  fileName: string;
  /** As the client declared it. */
  fileType: string;
  /** The bytes; `truncated` is set when the multipart parser cut it at the upload limit. */
  stream: Readable & { truncated?: boolean };
}

const MAX_NAME_CHARS = 255;
const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER.source, "g");
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

/** The base name without directories or control characters, at most 255 characters. */
export function safeFileName(name: string): string {
  const base = (name.split(/[\\/]/).pop() ?? "").replace(CONTROL_CHARACTERS, "").trim();
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
 * is committed, and the caller gets 422 `file_infected`. A clean file goes to the file storage
 * (ctx.files: the data directory or a bucket), then its row and FILE_UPLOADED are committed; if
 * that transaction fails the stored bytes are removed, so the storage keeps no file the database
 * does not know.
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
  let stored = false;
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
    // Stored before its row is written, so no row ever names bytes that are not there; removed
    // again if the row is not committed. (A crash in between leaves bytes no row names: unseen.)
    await ctx.files.store(received.storageKey, received.tempPath, received.size);
    stored = true;
    return await ctx.database.transaction(async (tx) => {
      // The room may have been deleted, or the uploader removed, while the bytes arrived.
      await roomForMember(tx.db, roomId, actor);
      const now = ctx.now();
      const fileId = await insertFileRow(tx.db, {
        room_id: roomId,
        uploaded_by: actor.userId,
        file_name: fileName,
        file_size: received.size,
        file_type: fileType,
        sha256: received.sha256,
        storage_key: received.storageKey,
        created_at: now,
      });
      const view: FileView = {
        id: fileId,
        roomId,
        fileName,
        fileSize: received.size,
        fileType,
        sha256: received.sha256,
        uploadedBy: actor.username,
        createdAt: isoTime(now),
      };
      // A DM's files, like its messages, stay between its members until it is promoted: the
      // event's audience (EVENT_AUDIENCE) keeps them from integrations.
      await tx.emit("FILE_UPLOADED", eventData.fileUploaded({ ...view, fileId: view.id }));
      return view;
    });
  } catch (error) {
    await removeQuietly(received.tempPath);
    if (stored) await ctx.files.remove(received.storageKey).catch(() => undefined);
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
  await ctx.database.transaction(async (tx) => {
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
