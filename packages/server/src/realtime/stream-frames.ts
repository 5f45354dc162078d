import {
  EVENT_AUDIENCE,
  EVENT_NAMES,
  isEventName,
  type EventAudience,
  type EventsHeardByStream,
} from "../events/event-catalogue.js";

/** The WebSocket subprotocol of GET /api/stream (docs/realtime.md). */
export const STREAM_PROTOCOL = "parley.v1";

/** Close codes of the stream. 4401: no valid auth frame within AUTH_TIMEOUT_MS. */
export const CLOSE = {
  unauthorized: 4401,
  /** The user already has PARLEY_STREAM_MAX_SOCKETS_PER_USER sockets on this process. */
  tooManySockets: 4429,
  /** Frames faster than PARLEY_STREAM_FRAMES_PER_SECOND (past the burst). */
  policyViolation: 1008,
  /** Not the parley.v1 subprotocol. */
  protocolError: 1002,
  /** The send queue of a slow reader overflowed; reconnect and resume with `after`. */
  tooSlow: 1013,
  /** The cross-process feed was interrupted; reconnect and resume with `after`. */
  serviceRestart: 1012,
  goingAway: 1001,
} as const;

/** The contract's 5 s for the first (auth) frame. */
export const AUTH_TIMEOUT_MS = 5_000;

/** A member's typing frames are relayed at most once per this many ms per room (the rest dropped). */
export const TYPING_INTERVAL_MS = 2_000;

/** The largest frame a client may send; a larger one closes the socket with 1009. */
export const MAX_CLIENT_FRAME_BYTES = 64 * 1024;

/**
 * The stream's side of each event's audience (EVENT_AUDIENCE in the catalogue), the one check
 * both buses make: `room` events are sent as `event` frames to the connections subscribed to
 * their room (its members: a DM's reach its two members), `room-end` ends those subscriptions,
 * `user-end` ends the named user's connections (their tokens stop working).
 */
export function streamAudience(event: string): EventAudience["stream"] {
  return isEventName(event) ? EVENT_AUDIENCE[event].stream : "none";
}

/** The events a subscribed room's connections receive as `event` frames. */
export type StreamEventName = EventsHeardByStream<"room">;
export const STREAM_EVENTS = EVENT_NAMES.filter(
  (event): event is StreamEventName => EVENT_AUDIENCE[event].stream === "room",
);

/** Events the gateway follows: the stream events, and an admin's room deletion (ends subscriptions). */
export type FollowedEventName = EventsHeardByStream<"room" | "room-end">;
export function isFollowedEvent(event: string): event is FollowedEventName {
  const audience = streamAudience(event);
  return audience === "room" || audience === "room-end";
}

/** Events that end a user's connections: their tokens stop working. */
export function endsUser(event: string): boolean {
  return streamAudience(event) === "user-end";
}

/** What a client may send. Anything else answers `{"type":"error","code":"invalid_frame"}`. */
export type ClientFrame =
  | { type: "auth"; token: string }
  | { type: "subscribe"; roomId: number; after?: number }
  | { type: "unsubscribe"; roomId: number }
  | { type: "signal"; roomId: number; to: string; payload: unknown }
  | { type: "typing"; roomId: number }
  | { type: "ping" };

/** Error codes of `{"type":"error"}` frames. */
export type StreamErrorCode =
  "forbidden" | "not_in_call" | "invalid_frame" | "signal_too_large" | "internal_error";

const isId = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value > 0;

/** Parses one text frame; undefined when it is not a frame the protocol knows. */
export function parseClientFrame(text: string): ClientFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const frame = value as Record<string, unknown>;
  switch (frame.type) {
    case "auth":
      return typeof frame.token === "string" ? { type: "auth", token: frame.token } : undefined;
    case "subscribe":
      if (!isId(frame.roomId)) return undefined;
      if (frame.after === undefined || frame.after === null)
        return { type: "subscribe", roomId: frame.roomId };
      if (typeof frame.after !== "number" || !Number.isSafeInteger(frame.after) || frame.after < 0)
        return undefined;
      return { type: "subscribe", roomId: frame.roomId, after: frame.after };
    case "unsubscribe":
      return isId(frame.roomId) ? { type: "unsubscribe", roomId: frame.roomId } : undefined;
    case "signal":
      if (!isId(frame.roomId) || typeof frame.to !== "string" || !("payload" in frame))
        return undefined;
      return { type: "signal", roomId: frame.roomId, to: frame.to, payload: frame.payload };
    case "typing":
      return isId(frame.roomId) ? { type: "typing", roomId: frame.roomId } : undefined;
    case "ping":
      return { type: "ping" };
    default:
      return undefined;
  }
}
