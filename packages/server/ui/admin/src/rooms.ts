import type { Room } from "@parley/client/browser";
import { paginate, type Api } from "./api.js";

/**
 * Every live room (not direct messages: integrations never hear those), for the pages that show
 * rooms by name and the pickers that choose them by name. Asked for once per page.
 */
export async function loadRooms(api: Api): Promise<Room[]> {
  return paginate.all(api, "GET /api/admin/rooms", { kind: "room", limit: 200 });
}

/** A room's name, or what is known of a room that no longer exists. */
export function roomName(rooms: ReadonlyMap<number, Room>, id: number): string {
  const room = rooms.get(id);
  return room?.name ?? `room ${id} (deleted)`;
}

export function byId(rooms: readonly Room[]): Map<number, Room> {
  return new Map(rooms.map((room) => [room.id, room]));
}
