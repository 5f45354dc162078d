/**
 * Rooms the user muted on this browser: kept in localStorage under `parley.chat.muted.<username>`
 * (a JSON array of room ids), so a mute survives reloads and holds in every tab of the browser, and
 * each person signed in on a shared browser has their own. A muted room raises no notification and
 * its unread count shows grey; nothing is sent to the server.
 */
const PREFIX = "parley.chat.muted.";

export interface MutedRooms {
  has(roomId: number): boolean;
  /** Mutes or unmutes; answers whether the room is now muted. */
  toggle(roomId: number): boolean;
}

export function mutedRooms(username: string): MutedRooms {
  const key = PREFIX + username;
  const read = (): Set<number> => {
    try {
      const value: unknown = JSON.parse(localStorage.getItem(key) ?? "[]");
      return new Set(Array.isArray(value) ? value.filter((id) => typeof id === "number") : []);
    } catch {
      return new Set();
    }
  };
  return {
    // Read each time: another tab may have changed it.
    has: (roomId) => read().has(roomId),
    toggle: (roomId) => {
      const muted = read();
      const now = !muted.delete(roomId);
      if (now) muted.add(roomId);
      localStorage.setItem(key, JSON.stringify([...muted]));
      return now;
    },
  };
}
