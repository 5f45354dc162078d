import { EVENT_NAMES } from "./event-catalogue.js";

/** "*" (every event, later ones included) or a prefix wildcard such as "MESSAGE_*". */
const PATTERN = /^[A-Z][A-Z0-9_]*\*$|^\*$/;

export function isEventPattern(entry: string): boolean {
  return PATTERN.test(entry);
}

/** The event names a pattern covers today (a pattern that covers none is a typo). */
export function eventsMatching(pattern: string): string[] {
  const prefix = pattern.slice(0, -1);
  return EVENT_NAMES.filter((name) => name.startsWith(prefix));
}

/**
 * What the fan-out statement matches wildcards against: the JSON array of the patterns' prefixes
 * ("" for "*"), or null when the subscription names events only (the common case, which then
 * costs the statement one `instr` per endpoint, as before wildcards).
 */
export function eventPrefixesOf(events: readonly string[]): string | null {
  const prefixes = events.filter(isEventPattern).map((pattern) => pattern.slice(0, -1));
  return prefixes.length === 0 ? null : JSON.stringify(prefixes);
}

/** `,3,17,` for rooms [3, 17]: instr(room_filter, ',17,') finds a room without parsing JSON. */
export function roomFilterOf(roomIds: readonly number[] | null): string | null {
  return roomIds === null ? null : `,${roomIds.join(",")},`;
}

export function roomIdsOf(roomFilter: string | null): number[] | null {
  return roomFilter === null ? null : roomFilter.split(",").filter(Boolean).map(Number);
}
