/**
 * A user became a member of a room or DM through someone's action: a DM was opened with them (or
 * by them, in another tab), or a member added them to a room. `by` is who did it.
 */
export interface RoomAddedNotice {
  /** Whose connections are told. */
  username: string;
  roomId: number;
  kind: "room" | "dm";
  by: string;
}

/**
 * Tells the user's live-stream connections, on every process, after the membership committed
 * (`{"type": "room_added", ...}` frames), so their pages list the room without a reload.
 */
export type AnnounceRoomAdded = (notice: RoomAddedNotice) => void;
