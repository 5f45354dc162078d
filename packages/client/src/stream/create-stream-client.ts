import type {
  ClientFrame,
  ServerFrame,
  StreamErrorCode,
  StreamEventFrame,
} from "../types/stream.js";
import type { WebSocketConstructor, WebSocketLike } from "./websocket-like.js";

export const STREAM_PROTOCOL = "parley.v1";

/** connecting: first attempt; open: authenticated; reconnecting: waiting to try again; closed: for good. */
export type StreamState = "connecting" | "open" | "reconnecting" | "closed";

export interface StreamClientOptions {
  /** The server, e.g. `http://127.0.0.1:8080` (the stream is at `/api/stream` on it). */
  baseUrl: string;
  /** The bearer token, or a function giving a fresh one for each connection. */
  token: string | (() => string | Promise<string>);
  /** A WebSocket implementation: the `ws` package in Node 20; default `globalThis.WebSocket`. */
  WebSocket?: WebSocketConstructor;
  /** First reconnect delay (doubling up to `maxReconnectDelayMs`, with jitter). Default 250. */
  minReconnectDelayMs?: number;
  /** Default 10000. */
  maxReconnectDelayMs?: number;
}

export interface StreamListeners {
  /**
   * A room event (MESSAGE_CREATED, MESSAGE_UPDATED, MESSAGE_DELETED, REACTION_ADDED,
   * REACTION_REMOVED, USER_JOINED_ROOM, USER_LEFT_ROOM, ROOM_DELETED).
   */
  event: (frame: StreamEventFrame) => void;
  /** Who is present in a subscribed room changed (or was first learnt). */
  presence: (roomId: number, present: readonly string[]) => void;
  signal: (frame: { roomId: number; from: string; payload: unknown }) => void;
  /** The user's read marker of a room moved (PUT /api/rooms/{roomId}/read, from any tab). */
  read: (frame: { roomId: number; messageId: number }) => void;
  /**
   * The user became a member of a room or DM by someone's action (`by`): a DM opened with them,
   * or by them in another tab, or a member added them to a room. Not subscribed yet: call
   * `subscribe(roomId)` to follow it.
   */
  roomAdded: (frame: { roomId: number; kind: "room" | "dm"; by: string }) => void;
  /** Another member is typing in a subscribed room. */
  typing: (frame: { roomId: number; username: string }) => void;
  error: (error: { code: StreamErrorCode | "unauthorized"; roomId?: number }) => void;
  state: (state: StreamState) => void;
  ready: (user: { userId: number; username: string }) => void;
}

export interface StreamClient {
  readonly state: StreamState;
  /** The signed-in user once `ready`. */
  readonly user: { userId: number; username: string } | undefined;
  /**
   * Subscribes to a room, now and after every reconnect. A reconnect resumes with `after` = the
   * last message id received in the room, so no message is missed or repeated; `after` here
   * sets the starting point (e.g. the newest message a page already shows).
   */
  subscribe(roomId: number, options?: { after?: number }): void;
  unsubscribe(roomId: number): void;
  /** Sends a WebRTC signal to another participant of the room's call. */
  signal(roomId: number, to: string, payload: unknown): void;
  /**
   * Tells a subscribed room's other members that the user is typing; the server relays at most
   * one per 2 s per room and drops the rest, so calling it on every keystroke is fine.
   */
  typing(roomId: number): void;
  /** Who is present in a subscribed room (empty until its `subscribed` frame). */
  present(roomId: number): readonly string[];
  on<K extends keyof StreamListeners>(type: K, listener: StreamListeners[K]): () => void;
  close(): void;
}

/**
 * A typed client of the live stream that stays connected: it authenticates with the first frame,
 * re-subscribes after every reconnect (back-off with jitter) and resumes each room from the last
 * message it received, keeping each room's presence list. A 4401 close (a bad or expired token)
 * ends it: state `closed` and an `unauthorized` error.
 */
export function createStreamClient(options: StreamClientOptions): StreamClient {
  const Impl =
    options.WebSocket ??
    (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket ??
    missingWebSocket();
  const url = `${options.baseUrl.replace(/\/+$/, "").replace(/^http/, "ws")}/api/stream`;
  const minDelay = options.minReconnectDelayMs ?? 250;
  const maxDelay = options.maxReconnectDelayMs ?? 10_000;
  const listeners: { [K in keyof StreamListeners]: Set<StreamListeners[K]> } = {
    event: new Set(),
    presence: new Set(),
    signal: new Set(),
    read: new Set(),
    roomAdded: new Set(),
    typing: new Set(),
    error: new Set(),
    state: new Set(),
    ready: new Set(),
  };
  /** Rooms wanted, with the resume point of each. */
  const rooms = new Map<number, { after: number | undefined }>();
  const presence = new Map<number, readonly string[]>();
  let socket: WebSocketLike | undefined;
  let state: StreamState = "connecting";
  let user: { userId: number; username: string } | undefined;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const emit = <K extends keyof StreamListeners>(
    type: K,
    ...args: Parameters<StreamListeners[K]>
  ) => {
    for (const listener of listeners[type]) (listener as (...a: unknown[]) => void)(...args);
  };
  const setState = (next: StreamState) => {
    if (state === next) return;
    state = next;
    emit("state", next);
  };
  // A function, not `state === "closed"` inline: close() may run during any await.
  const isClosed = () => state === "closed";
  const send = (frame: ClientFrame) => {
    if (socket && socket.readyState === 1 && user) socket.send(JSON.stringify(frame));
  };
  const subscribeFrame = (roomId: number): ClientFrame => {
    const after = rooms.get(roomId)?.after;
    return after === undefined
      ? { type: "subscribe", roomId }
      : { type: "subscribe", roomId, after };
  };

  function onFrame(frame: ServerFrame): void {
    switch (frame.type) {
      case "ready":
        user = { userId: frame.userId, username: frame.username };
        attempt = 0;
        setState("open");
        emit("ready", user);
        for (const roomId of rooms.keys()) send(subscribeFrame(roomId));
        return;
      case "subscribed":
      case "presence":
        if (!rooms.has(frame.roomId)) return;
        presence.set(frame.roomId, frame.present);
        emit("presence", frame.roomId, frame.present);
        return;
      case "event": {
        const room = rooms.get(frame.roomId);
        if (!room) return;
        // The LAST message received, not the largest id: the server resumes from its place in
        // commit order (docs/realtime.md, "Resume").
        if (frame.event === "MESSAGE_CREATED") room.after = frame.data.messageId;
        if (frame.event === "ROOM_DELETED") rooms.delete(frame.roomId);
        emit("event", frame);
        return;
      }
      case "signal":
        emit("signal", { roomId: frame.roomId, from: frame.from, payload: frame.payload });
        return;
      case "read":
        emit("read", { roomId: frame.roomId, messageId: frame.messageId });
        return;
      case "room_added":
        emit("roomAdded", { roomId: frame.roomId, kind: frame.kind, by: frame.by });
        return;
      case "typing":
        if (rooms.has(frame.roomId))
          emit("typing", { roomId: frame.roomId, username: frame.username });
        return;
      case "error":
        if (frame.code === "forbidden" && frame.roomId !== undefined) rooms.delete(frame.roomId);
        emit(
          "error",
          frame.roomId === undefined
            ? { code: frame.code }
            : { code: frame.code, roomId: frame.roomId },
        );
        return;
      case "pong":
        return;
    }
  }

  async function connect(): Promise<void> {
    timer = undefined;
    if (state === "closed") return;
    let token: string;
    try {
      token = typeof options.token === "function" ? await options.token() : options.token;
    } catch {
      return scheduleReconnect();
    }
    if (isClosed()) return;
    const ws = new Impl(url, STREAM_PROTOCOL);
    socket = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: "auth", token }));
    ws.onmessage = (event) => {
      if (typeof event.data !== "string") return;
      try {
        onFrame(JSON.parse(event.data) as ServerFrame);
      } catch {
        // A frame this version does not understand: ignore it.
      }
    };
    ws.onerror = () => {};
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = undefined;
      user = undefined;
      if (state === "closed") return;
      if (event.code === 4401) {
        setState("closed");
        emit("error", { code: "unauthorized" });
        return;
      }
      scheduleReconnect();
    };
  }

  function scheduleReconnect(): void {
    if (state === "closed") return;
    setState("reconnecting");
    const base = Math.min(maxDelay, minDelay * 2 ** attempt++);
    timer = setTimeout(() => void connect(), base / 2 + Math.random() * (base / 2));
  }

  void connect();

  return {
    get state() {
      return state;
    },
    get user() {
      return user;
    },
    subscribe(roomId, subscribeOptions = {}) {
      const known = rooms.get(roomId);
      rooms.set(roomId, { after: subscribeOptions.after ?? known?.after });
      send(subscribeFrame(roomId));
    },
    unsubscribe(roomId) {
      rooms.delete(roomId);
      presence.delete(roomId);
      send({ type: "unsubscribe", roomId });
    },
    signal(roomId, to, payload) {
      send({ type: "signal", roomId, to, payload });
    },
    typing(roomId) {
      send({ type: "typing", roomId });
    },
    present(roomId) {
      return presence.get(roomId) ?? [];
    },
    on(type, listener) {
      listeners[type].add(listener);
      return () => listeners[type].delete(listener);
    },
    close() {
      setState("closed");
      clearTimeout(timer);
      socket?.close(1000, "client closed");
      socket = undefined;
    },
  };
}

function missingWebSocket(): never {
  throw new TypeError(
    "no WebSocket implementation: pass one as the WebSocket option (in Node 20: the ws package)",
  );
}
