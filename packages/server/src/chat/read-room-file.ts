import type { Readable } from "node:stream";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { AppError } from "../errors/app-error.js";
import { findRoomFile } from "./files-repository.js";
import { isHidden } from "./message-visibility.js";
import { roomForMember } from "./room-access.js";

/** A file a download may serve: what its headers say, and its bytes when asked for. */
export interface ReadableRoomFile {
  id: number;
  name: string;
  size: number;
  mediaType: string;
  sha256: string;
  open(): Promise<Readable>;
}

function fileNotFound(roomId: number, fileId: number): AppError {
  return new AppError("file_not_found", `no file ${fileId} in room ${roomId}`);
}

/**
 * A file of a room for `actor` to download: who may read the room's messages may read its files
 * (members; an admin in a room, never in a direct message). Beyond that, a file is served only
 * when it can be seen in the conversation:
 * - carried by a message that is visible: a message moderation holds (QUARANTINED, or REJECTED)
 *   hides its files from everyone, its author and admins included, until a reviewer approves it;
 *   a deleted message's files are gone;
 * - not yet carried by any message: to its uploader only (who attaches it to a post next).
 * Infected uploads are never stored, so there is nothing of them to serve. Every other case
 * answers 404 file_not_found, as for an id that does not exist.
 */
export async function readRoomFile(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
  fileId: number,
): Promise<ReadableRoomFile> {
  await roomForMember(ctx.db, roomId, actor, { allowAdmin: true });
  const row = await findRoomFile(ctx.db, roomId, fileId);
  if (!row) throw fileNotFound(roomId, fileId);
  const visible =
    row.message_id === null
      ? Number(row.uploaded_by) === actor.userId
      : row.message_status !== null &&
        !isHidden(row.message_status) &&
        row.message_deleted_at === null;
  if (!visible) throw fileNotFound(roomId, fileId);
  const key = row.storage_key;
  return {
    id: Number(row.id),
    name: row.file_name,
    size: Number(row.file_size),
    mediaType: row.file_type,
    sha256: row.sha256,
    open: () => ctx.files.open(key),
  };
}
