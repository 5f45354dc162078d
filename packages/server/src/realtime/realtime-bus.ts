import type { FollowedEventName } from "./stream-frames.js";

/** A committed event the stream follows, with its catalogue `data` (always carrying `roomId`). */
export interface BusEvent {
  kind: "event";
  event: FollowedEventName;
  data: { roomId: number } & Record<string, unknown>;
}

/** A WebRTC signal from one call participant to another, relayed to every process. */
export interface BusSignal {
  kind: "signal";
  roomId: number;
  from: string;
  to: string;
  payload: unknown;
}

/** A user was disabled or deleted: their open connections end (their token no longer works). */
export interface BusUserEnded {
  kind: "user-ended";
  username: string;
}

/** A user's read marker of a room moved: their connections on every process are told. */
export interface BusRead {
  kind: "read";
  username: string;
  roomId: number;
  messageId: number;
}

/** A user became a member of a room or DM by someone's action: their connections are told. */
export interface BusRoomAdded {
  kind: "room-added";
  username: string;
  roomId: number;
  roomKind: "room" | "dm";
  by: string;
}

/** A member is typing in a room: the room's other subscribers, on every process, are told. */
export interface BusTyping {
  kind: "typing";
  roomId: number;
  username: string;
}

/** What a process relays to every process (itself included), outside any transaction. */
export type BusRelay = BusSignal | BusRead | BusTyping | BusRoomAdded;

export type BusMessage = BusEvent | BusRelay | BusUserEnded;

/**
 * How the processes sharing a database tell each other what happened: committed events in commit
 * order (per room at least), and signals. On SQLite (one process) it is a function call; on
 * PostgreSQL, NOTIFY sent inside the emitting transaction and one LISTEN connection per process.
 */
export interface RealtimeBus {
  /**
   * Starts delivering to `onMessage`. `onGap` is called when messages may have been lost (the
   * LISTEN connection dropped and came back): the gateway then asks its clients to resume.
   * Resolves once messages committed from now on will be delivered.
   */
  start(onMessage: (message: BusMessage) => void, onGap: () => void): Promise<void>;
  /**
   * Relays a signal, a read marker, a typing notice or a room added to every process (including
   * this one).
   */
  publish(message: BusRelay): Promise<void>;
  close(): Promise<void>;
}

/**
 * A signal's payload (SDP, ICE candidate) as the bus carries it is at most this many bytes of JSON:
 * PostgreSQL refuses NOTIFY payloads of 8000 bytes or more, and the same limit applies everywhere
 * so a client behaves the same on either database.
 */
export const MAX_SIGNAL_PAYLOAD_BYTES = 7_000;
