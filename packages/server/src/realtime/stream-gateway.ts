import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import pLimit from "p-limit";
import type client from "prom-client";
import type { WebSocket } from "ws";
import type { AppContext } from "../app-context.js";
import { authenticateRequest } from "../auth/require-role.js";
import { isAppError } from "../errors/app-error.js";
import { findLiveRoom } from "../chat/room-access.js";
import { isMember } from "../chat/rooms-repository.js";
import type { RoomAddedNotice } from "../chat/room-added-notice.js";
import { inSameCall } from "./calls-service.js";
import {
  loadFullMessage,
  messagesAfter,
  messagesByIds,
  type ResumedMessage,
} from "./message-frames.js";
import { presentIn } from "./presence-repository.js";
import type { PresenceTracker } from "./presence-tracker.js";
import {
  MAX_SIGNAL_PAYLOAD_BYTES,
  type BusEvent,
  type BusMessage,
  type RealtimeBus,
} from "./realtime-bus.js";
import { prepareTextFrame } from "./prepared-frame.js";
import { FrameFlusher, StreamConnection, type Subscription } from "./stream-connection.js";
import {
  AUTH_TIMEOUT_MS,
  CLOSE,
  parseClientFrame,
  STREAM_PROTOCOL,
  TYPING_INTERVAL_MS,
  type ClientFrame,
  type StreamErrorCode,
} from "./stream-frames.js";
import { createStreamMetrics, type StreamMetrics, type UpgradeRefusal } from "./stream-metrics.js";
import { TokenBucket } from "./token-bucket.js";
import { TypingThrottle } from "./typing-throttle.js";

/** Recent MESSAGE_CREATED ids kept per room, in commit order, for resume (see resumePlan). */
const HISTORY_PER_ROOM = 512;
/** Rooms whose recent history is kept (least recently active dropped first). */
const HISTORY_ROOMS = 2_000;

/** How long the ids a resume sent are kept to drop their late live copies. */
const REPLAYED_MEMORY_MS = 60_000;

/**
 * A connection's frames are handled one after the other; while this many wait (or this many
 * bytes of them), its socket is not read, and the client's further frames wait in its own buffers
 * (TCP's flow control) instead of the server's memory. Read again once half have been handled.
 */
const MAX_PENDING_FRAMES = 32;
const MAX_PENDING_BYTES = 512 * 1024;

/**
 * Resumes reading the database at once, per process; the others wait their turn. A resume reads a
 * page at a time and holds its place only while reading, never while its client reads.
 */
const CONCURRENT_RESUME_READS = 4;

interface Prefetched {
  message?: Awaited<ReturnType<typeof loadFullMessage>>;
  present?: string[];
}

/**
 * The process's realtime work the gateway serves with, started beside the dispatcher
 * (background-work.ts): the bus it follows and publishes signals on, and presence.
 */
export interface RealtimeParts {
  readonly bus: RealtimeBus;
  readonly presence: PresenceTracker;
}

export interface StreamGatewayOptions {
  metrics: StreamMetrics;
  log: { warn(object: object, message: string): void };
  /** Unread bytes a client may have before it is dropped as too slow. Default 4 MiB. */
  maxBufferedBytes?: number;
  /** Messages per query when resuming with `after`. Default 50. */
  resumePageSize?: number;
  /** The shortest time between two flushes of queued frames (FrameFlusher). Default: the config's. */
  coalesceMs?: number;
}

/**
 * The live stream of one process (GET /api/stream, docs/realtime.md): authenticates sockets,
 * keeps their room subscriptions, and turns what the bus delivers (committed events, in commit
 * order; signals) into frames. Each room has its own promise chain, so the frames of one room
 * leave in the order the bus delivered the events even though a MESSAGE_CREATED first loads its
 * message (once per process, whatever the number of subscribers).
 */
export class StreamGateway {
  private readonly connections = new Set<StreamConnection>();
  private readonly rooms = new Map<number, Set<StreamConnection>>();
  private readonly users = new Map<string, Set<StreamConnection>>();
  private readonly chains = new Map<number, Promise<void>>();
  /** Per room, the ids of the latest MESSAGE_CREATED events in the order the bus delivered them. */
  private readonly history = new Map<number, number[]>();
  private readonly maxBufferedBytes: number;
  private readonly resumePageSize: number;
  /** Bounds the resumes reading the database at once (CONCURRENT_RESUME_READS). */
  private readonly resumeReads = pLimit(CONCURRENT_RESUME_READS);
  private readonly flusher: FrameFlusher;
  /** Typing frames relayed per user and room (TYPING_INTERVAL_MS), across the user's sockets here. */
  private readonly typing = new TypingThrottle(TYPING_INTERVAL_MS);
  private pingTimer: NodeJS.Timeout | undefined;
  private reauthTimer: NodeJS.Timeout | undefined;
  private reauthenticating: Promise<void> = Promise.resolve();
  private parts: RealtimeParts | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly options: StreamGatewayOptions,
  ) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? 4 * 1024 * 1024;
    this.resumePageSize = options.resumePageSize ?? 50;
    this.flusher = new FrameFlusher(options.coalesceMs ?? ctx.config.streamCoalesceMs, (writes) =>
      options.metrics.writes.inc(writes),
    );
  }

  /**
   * Serves with the process's bus and presence: follows the bus (starting it) and pings idle
   * sockets. Until then, sockets are turned away.
   */
  async start(parts: RealtimeParts): Promise<void> {
    this.parts = parts;
    await parts.bus.start(
      (message) => this.onBusMessage(message),
      () => this.restartAll(),
    );
    this.pingTimer = setInterval(() => this.pingIdle(), this.ctx.config.streamPingIntervalMs);
    this.pingTimer.unref();
    this.reauthTimer = setInterval(() => {
      this.reauthenticating = this.reauthenticateAll();
    }, this.ctx.config.streamReauthenticateMs);
    this.reauthTimer.unref();
  }

  /**
   * Closes every socket (going away) and waits for the frames in flight. The bus and presence are
   * stopped by their owner, after this.
   */
  async stop(): Promise<void> {
    clearInterval(this.pingTimer);
    clearInterval(this.reauthTimer);
    await this.reauthenticating;
    for (const connection of this.connections)
      connection.close(CLOSE.goingAway, "server shutting down");
    for (const connection of [...this.connections]) this.remove(connection);
    await Promise.all(this.chains.values());
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  get subscriptionCount(): number {
    let count = 0;
    for (const connection of this.connections) count += connection.subscriptions.size;
    return count;
  }

  bufferedBytes(): number {
    let total = 0;
    for (const connection of this.connections) total += connection.bufferedBytes();
    return total;
  }

  /** Counts an upgrade refused before it happened (the process's budget, the address's share). */
  recordRefusal(reason: UpgradeRefusal): void {
    this.options.metrics.refused.inc({ limit: reason });
  }

  /**
   * A new socket: it has AUTH_TIMEOUT_MS to send a valid auth frame. Its frames are rate-limited
   * (PARLEY_STREAM_FRAMES_PER_SECOND, PARLEY_STREAM_FRAME_BURST; closed with 1008 past them, and
   * then no longer read) and handled in order, at most MAX_PENDING_FRAMES waiting.
   */
  accept(socket: WebSocket, sessionCookie?: string): void {
    const connection = new StreamConnection(
      socket,
      this.maxBufferedBytes,
      () => this.options.metrics.slowDropped.inc(),
      this.flusher,
    );
    connection.sessionCookie = sessionCookie;
    if (socket.protocol !== STREAM_PROTOCOL) {
      connection.close(CLOSE.protocolError, `use the ${STREAM_PROTOCOL} subprotocol`);
      return;
    }
    if (!this.parts) {
      connection.close(CLOSE.serviceRestart, "the live stream is not running yet; reconnect");
      return;
    }
    this.connections.add(connection);
    const authTimer = setTimeout(
      () => connection.close(CLOSE.unauthorized, "no auth frame within 5 s"),
      AUTH_TIMEOUT_MS,
    );
    const { streamFramesPerSecond: perSecond, streamFrameBurst: burst } = this.ctx.config;
    const rate = new TokenBucket(perSecond, burst);
    /** Takes a frame's token; past the rate, closes the connection and stops reading it. */
    const overRate = (): boolean => {
      if (rate.take()) return false;
      this.options.metrics.refused.inc({ limit: "frame_rate" });
      connection.close(
        CLOSE.policyViolation,
        `more than ${burst} frames at once or ${perSecond} per second`,
      );
      // What it still sends waits in the kernel's buffers until the socket is cut off.
      socket.pause();
      return true;
    };
    // Frames are handled one after the other, so a subscribe's resume finishes before the next.
    let queue = Promise.resolve();
    let pendingFrames = 0;
    let pendingBytes = 0;
    socket.on("message", (data, isBinary) => {
      if (connection.closed || overRate()) return;
      connection.alive = true;
      connection.pinged = false;
      const text = isBinary ? undefined : data.toString();
      const bytes = text === undefined ? 0 : text.length;
      pendingFrames++;
      pendingBytes += bytes;
      if (pendingFrames >= MAX_PENDING_FRAMES || pendingBytes >= MAX_PENDING_BYTES) socket.pause();
      queue = queue.then(async () => {
        try {
          if (connection.closed) return;
          const frame = text === undefined ? undefined : parseClientFrame(text);
          if (!connection.principal) {
            clearTimeout(authTimer);
            await this.authenticate(connection, frame);
          } else if (!frame || frame.type === "auth") {
            this.error(connection, "invalid_frame");
          } else {
            await this.handle(connection, frame);
          }
        } catch (error) {
          this.options.log.warn({ err: (error as Error).message }, "stream frame failed");
          this.error(connection, "internal_error");
        } finally {
          pendingFrames--;
          pendingBytes -= bytes;
          if (
            socket.isPaused &&
            !connection.closed &&
            pendingFrames <= MAX_PENDING_FRAMES / 2 &&
            pendingBytes <= MAX_PENDING_BYTES / 2
          )
            socket.resume();
        }
      });
    });
    // Control frames too: ws answers each ping with a pong.
    socket.on("ping", () => {
      if (!connection.closed) overRate();
    });
    socket.on("pong", () => {
      if (connection.closed || overRate()) return;
      connection.alive = true;
      connection.pinged = false;
    });
    socket.on("close", () => {
      clearTimeout(authTimer);
      connection.closed = true;
      this.remove(connection);
    });
    socket.on("error", () => socket.terminate());
  }

  private async authenticate(connection: StreamConnection, frame: ClientFrame | undefined) {
    if (!frame || frame.type !== "auth") {
      connection.close(CLOSE.unauthorized, "the first frame must be {type: auth, token}");
      return;
    }
    // An empty token: the session cookie of the upgrade from a Parley page (realtime-routes.ts).
    const token = frame.token === "" ? (connection.sessionCookie ?? "") : frame.token;
    let principal;
    try {
      principal = await authenticateRequest(this.ctx, `Bearer ${token}`);
    } catch {
      connection.close(CLOSE.unauthorized, "invalid token");
      return;
    }
    if (connection.closed) return;
    const { userId, username } = principal;
    let mine = this.users.get(username);
    const perUser = this.ctx.config.streamMaxSocketsPerUser;
    if ((mine?.size ?? 0) >= perUser) {
      this.options.metrics.refused.inc({ limit: "user" });
      connection.close(
        CLOSE.tooManySockets,
        `this user already has ${perUser} live-stream sockets on this process`,
      );
      return;
    }
    connection.principal = principal;
    connection.token = token;
    if (!mine) this.users.set(username, (mine = new Set()));
    mine.add(connection);
    connection.sendJson({ type: "ready", userId, username });
  }

  private async handle(connection: StreamConnection, frame: ClientFrame): Promise<void> {
    switch (frame.type) {
      case "ping":
        connection.sendJson({ type: "pong" });
        return;
      case "subscribe":
        return this.subscribe(connection, frame.roomId, frame.after);
      case "unsubscribe":
        this.unsubscribe(connection, frame.roomId);
        return;
      case "signal":
        return this.signal(connection, frame.roomId, frame.to, frame.payload);
      case "typing":
        return this.relayTyping(connection, frame.roomId);
    }
  }

  /**
   * A typing notice from a connection subscribed to the room (so a member: subscribing checked
   * it, and leaving ends the subscription) goes to the room's other subscribers on every process;
   * more than one per TYPING_INTERVAL_MS per user and room is dropped without an answer. Nothing
   * is stored and no event fires.
   */
  private async relayTyping(connection: StreamConnection, roomId: number): Promise<void> {
    if (!connection.subscriptions.has(roomId)) {
      this.error(connection, "forbidden", { roomId });
      return;
    }
    const username = connection.principal!.username;
    if (!this.typing.allow(`${roomId}:${username}`, Date.now())) return;
    await this.running().bus.publish({ kind: "typing", roomId, username });
  }

  /**
   * Tells the user's connections, on every process, that their read marker of a room moved (PUT
   * /api/rooms/{roomId}/read), so their other tabs follow. The tab that moved it gets the frame
   * too: it carries the marker it already has. Nothing is sent while the stream is not running.
   */
  announceRead(read: { username: string; roomId: number; messageId: number }): void {
    if (!this.parts) return;
    this.parts.bus
      .publish({ kind: "read", ...read })
      .catch((error: unknown) =>
        this.options.log.warn({ err: (error as Error).message }, "read marker not relayed"),
      );
  }

  /**
   * Tells the user's connections, on every process, that they became a member of a room or DM by
   * someone's action (a DM opened with them, being added to a room), after it committed, so their
   * pages list it without a reload. Nothing is sent while the stream is not running.
   */
  announceRoomAdded(notice: RoomAddedNotice): void {
    if (!this.parts) return;
    this.parts.bus
      .publish({
        kind: "room-added",
        username: notice.username,
        roomId: notice.roomId,
        roomKind: notice.kind,
        by: notice.by,
      })
      .catch((error: unknown) =>
        this.options.log.warn({ err: (error as Error).message }, "room added not relayed"),
      );
  }

  private error(connection: StreamConnection, code: StreamErrorCode, extra: object = {}) {
    connection.sendJson({ type: "error", code, ...extra });
  }

  /**
   * Gap-free resume: the subscription is registered (holding live frames back) BEFORE the
   * messages after `after` are read, so a message committed at any moment is either in that read
   * or among the held-back frames, or both; the held-back copies of resumed messages are dropped.
   */
  private async subscribe(connection: StreamConnection, roomId: number, after?: number) {
    const principal = connection.principal!;
    if (connection.subscriptions.has(roomId)) this.unsubscribe(connection, roomId);
    let allowed = false;
    try {
      await findLiveRoom(this.ctx.db, roomId);
      allowed = await isMember(this.ctx.db, roomId, principal.userId);
    } catch {
      allowed = false;
    }
    if (!allowed) {
      this.error(connection, "forbidden", { roomId });
      return;
    }
    if (connection.closed) return;
    const subscription: Subscription = { roomId, pending: [], heldBytes: 0, replayed: undefined };
    connection.subscriptions.set(roomId, subscription);
    let subscribers = this.rooms.get(roomId);
    if (!subscribers) this.rooms.set(roomId, (subscribers = new Set()));
    subscribers.add(connection);

    let resumed = false;
    try {
      await this.running().presence.connect(roomId, principal);
      const present = await presentIn(this.ctx.db, roomId);
      connection.sendJson({ type: "subscribed", roomId, present });
      resumed = after === undefined || (await this.resume(connection, subscription, after));
    } finally {
      // Ended early (closed, unsubscribed, or failed): what was held back is let go, and a failed
      // subscription ends rather than go on with a gap (the client subscribes again).
      if (!resumed) {
        connection.release(subscription);
        if (connection.subscriptions.get(roomId) === subscription)
          this.unsubscribe(connection, roomId);
      }
    }
    if (!resumed) return;
    for (const held of connection.release(subscription)) {
      if (held.messageId !== undefined && subscription.replayed?.delete(held.messageId)) continue;
      connection.send(held.frame);
    }
    // A notification is late by milliseconds, not a minute: then the remaining ids are forgotten.
    if (subscription.replayed)
      setTimeout(() => (subscription.replayed = undefined), REPLAYED_MEMORY_MS).unref();
  }

  /**
   * Sends the messages of the subscription's room after `after`, as MESSAGE_CREATED frames, in
   * pages of `resumePageSize`: each page is read from the database when its turn comes among the
   * process's resumes (CONCURRENT_RESUME_READS), and each frame is sent once the client has read
   * enough of the previous ones (waitToSend), so a resume of any length keeps within the
   * connection's bound and a reader that reads gets all of it. False when it ended early: the
   * connection closed, or the subscription ended.
   */
  private async resume(
    connection: StreamConnection,
    subscription: Subscription,
    after: number,
  ): Promise<boolean> {
    const roomId = subscription.roomId;
    const replayed = new Set<number>();
    subscription.replayed = replayed;
    const plan = this.resumePlan(roomId, after);
    const current = () =>
      !connection.closed && connection.subscriptions.get(roomId) === subscription;
    const sendAll = async (page: ResumedMessage[]): Promise<boolean> => {
      for (const message of page) {
        if (plan.seen.has(message.messageId) || replayed.has(message.messageId)) continue;
        // One message per turn of the event loop: requests and the other resumes go in between
        // (rendering and serializing a large message takes milliseconds).
        await yieldToEventLoop();
        if (!current()) return false;
        const data = message.data();
        const frame = prepareTextFrame(
          JSON.stringify({ type: "event", event: "MESSAGE_CREATED", roomId, data }),
        );
        if (!(await connection.waitToSend(frame.length)) || !current()) return false;
        replayed.add(message.messageId);
        connection.send(frame);
      }
      return true;
    };
    const read = <T>(query: () => Promise<T>) => this.resumeReads(query);
    if (!(await sendAll(await read(() => messagesByIds(this.ctx.db, roomId, plan.committedLater)))))
      return false;
    let cursor = after;
    for (;;) {
      if (!current()) return false;
      const page = await read(() =>
        messagesAfter(this.ctx.db, roomId, cursor, this.resumePageSize),
      );
      if (!(await sendAll(page))) return false;
      if (page.length < this.resumePageSize) return true;
      cursor = page[page.length - 1]!.messageId;
    }
  }

  /**
   * What a resume from `after` (the last message the client received) must add to, and take from,
   * "every message with a larger id". On PostgreSQL ids are drawn before commit, so two posts into
   * one room can commit in the opposite order of their ids: a client that got 11 and then lost its
   * connection before 10 arrived resumes with after = 11, and 10 would be missed; one that got 11
   * and then 10 resumes with after = 10, and 11 would come twice. The ids the bus delivered right
   * around `after` (every process sees the same commit order) settle both: later-committed smaller
   * ids are added, earlier-committed larger ones skipped. An `after` older than the kept history
   * falls back to the plain id comparison.
   */
  private resumePlan(
    roomId: number,
    after: number,
  ): { committedLater: number[]; seen: Set<number> } {
    const recent = this.history.get(roomId) ?? [];
    const at = recent.lastIndexOf(after);
    if (at < 0) return { committedLater: [], seen: new Set() };
    return {
      committedLater: recent.slice(at + 1).filter((id) => id < after),
      seen: new Set(recent.slice(0, at).filter((id) => id > after)),
    };
  }

  private remember(roomId: number, messageId: number): void {
    let recent = this.history.get(roomId);
    if (recent) this.history.delete(roomId);
    else recent = [];
    recent.push(messageId);
    if (recent.length > HISTORY_PER_ROOM) recent.splice(0, recent.length - HISTORY_PER_ROOM);
    this.history.set(roomId, recent);
    if (this.history.size > HISTORY_ROOMS) this.history.delete(this.history.keys().next().value!);
  }

  private unsubscribe(connection: StreamConnection, roomId: number): void {
    if (!connection.subscriptions.delete(roomId)) return;
    const subscribers = this.rooms.get(roomId);
    subscribers?.delete(connection);
    if (subscribers?.size === 0) this.rooms.delete(roomId);
    void this.running().presence.disconnect(roomId, connection.principal!.userId);
  }

  private async signal(connection: StreamConnection, roomId: number, to: string, payload: unknown) {
    const from = connection.principal!.username;
    if (!(await inSameCall(this.ctx.db, roomId, from, to))) {
      this.error(connection, "not_in_call", { roomId });
      return;
    }
    const size = Buffer.byteLength(JSON.stringify(payload ?? null));
    if (size > MAX_SIGNAL_PAYLOAD_BYTES) {
      this.error(connection, "signal_too_large", { roomId, limit: MAX_SIGNAL_PAYLOAD_BYTES });
      return;
    }
    await this.running().bus.publish({ kind: "signal", roomId, from, to, payload });
  }

  /** The bus and presence; a socket is accepted only once they run (start()). */
  private running(): RealtimeParts {
    if (!this.parts) throw new Error("the stream gateway has not been started");
    return this.parts;
  }

  private remove(connection: StreamConnection): void {
    if (!this.connections.delete(connection)) return;
    for (const roomId of [...connection.subscriptions.keys()]) this.unsubscribe(connection, roomId);
    const principal = connection.principal;
    if (principal) {
      const mine = this.users.get(principal.username);
      mine?.delete(connection);
      if (mine?.size === 0) this.users.delete(principal.username);
    }
  }

  private onBusMessage(message: BusMessage): void {
    if (message.kind === "user-ended") {
      // Disabled or deleted: its token no longer works, so neither does a connection it opened.
      for (const connection of [...(this.users.get(message.username) ?? [])])
        connection.close(CLOSE.unauthorized, "the user was disabled or deleted");
      return;
    }
    if (message.kind === "read") {
      const frame = JSON.stringify({
        type: "read",
        roomId: message.roomId,
        messageId: message.messageId,
      });
      for (const connection of this.users.get(message.username) ?? []) connection.send(frame);
      return;
    }
    if (message.kind === "room-added") {
      const frame = JSON.stringify({
        type: "room_added",
        roomId: message.roomId,
        kind: message.roomKind,
        by: message.by,
      });
      for (const connection of this.users.get(message.username) ?? []) connection.send(frame);
      return;
    }
    if (message.kind === "typing") {
      const subscribers = this.rooms.get(message.roomId);
      if (!subscribers) return;
      const frame = prepareTextFrame(
        JSON.stringify({ type: "typing", roomId: message.roomId, username: message.username }),
      );
      for (const connection of subscribers)
        if (connection.principal?.username !== message.username)
          connection.sendRoomFrame(message.roomId, frame);
      return;
    }
    if (message.kind === "signal") {
      const frame = JSON.stringify({
        type: "signal",
        roomId: message.roomId,
        from: message.from,
        payload: message.payload,
      });
      for (const connection of this.users.get(message.to) ?? []) connection.send(frame);
      return;
    }
    const roomId = message.data.roomId;
    if (message.event === "MESSAGE_CREATED")
      this.remember(roomId, message.data.messageId as number);
    // What a frame needs from the database is fetched at once, in parallel with the frames ahead
    // of it; only sending waits for them. (Loading one message after another capped a room at one
    // database round trip per message, which a busy PostgreSQL made slower than 200 messages/s.)
    const prefetched = this.rooms.has(roomId) ? this.prefetch(message) : undefined;
    prefetched?.catch(() => {});
    const previous = this.chains.get(roomId) ?? Promise.resolve();
    const next = previous
      .then(() => this.deliver(message, prefetched))
      .catch((error: unknown) =>
        this.options.log.warn({ err: (error as Error).message, roomId }, "stream event failed"),
      );
    this.chains.set(roomId, next);
    void next.then(() => {
      if (this.chains.get(roomId) === next) this.chains.delete(roomId);
    });
  }

  private async prefetch({ event, data }: BusEvent): Promise<Prefetched> {
    if (event === "MESSAGE_CREATED" || event === "MESSAGE_UPDATED")
      return { message: await loadFullMessage(this.ctx.db, data.messageId as number) };
    if ((event === "USER_JOINED_ROOM" || event === "USER_LEFT_ROOM") && data.via === "presence")
      return { present: await presentIn(this.ctx.db, data.roomId) };
    return {};
  }

  private async deliver(
    { event, data }: BusEvent,
    prefetched: Promise<Prefetched> | undefined,
  ): Promise<void> {
    const roomId = data.roomId;
    this.options.metrics.events.inc({ event });
    if (!this.rooms.has(roomId)) return;
    if (event === "ADMIN_ROOM_DELETED") {
      this.dropRoom(roomId);
      return;
    }
    const fetched = await (prefetched ?? this.prefetch({ kind: "event", event, data }));
    let frameData: object = data;
    let messageId: number | undefined;
    if (event === "MESSAGE_CREATED" || event === "MESSAGE_UPDATED") {
      // A resume dedupes created messages by id; an edit is not one.
      if (event === "MESSAGE_CREATED") messageId = data.messageId as number;
      const message = fetched.message;
      if (!message) return;
      frameData = { ...data, message };
    }
    this.broadcast(
      roomId,
      JSON.stringify({ type: "event", event, roomId, data: frameData }),
      messageId,
    );
    if ((event === "USER_JOINED_ROOM" || event === "USER_LEFT_ROOM") && data.via === "presence") {
      const present = fetched.present ?? (await presentIn(this.ctx.db, roomId));
      this.broadcast(roomId, JSON.stringify({ type: "presence", roomId, present }));
    }
    if (event === "USER_LEFT_ROOM" && data.via === "membership") {
      // No longer a member: its subscriptions to the room end.
      for (const connection of this.users.get(data.username as string) ?? [])
        if (connection.subscriptions.has(roomId)) {
          this.unsubscribe(connection, roomId);
          this.error(connection, "forbidden", { roomId });
        }
    }
    if (event === "ROOM_DELETED") this.dropRoom(roomId);
  }

  private broadcast(roomId: number, text: string, messageId?: number): void {
    const subscribers = this.rooms.get(roomId);
    if (!subscribers) return;
    const frame = prepareTextFrame(text);
    let sent = 0;
    for (const connection of subscribers) {
      connection.sendRoomFrame(roomId, frame, messageId);
      sent++;
    }
    this.options.metrics.framesSent.inc(sent);
  }

  private dropRoom(roomId: number): void {
    for (const connection of [...(this.rooms.get(roomId) ?? [])])
      this.unsubscribe(connection, roomId);
  }

  /** The bus may have lost events: every client reconnects and resumes with `after`. */
  private restartAll(): void {
    for (const connection of [...this.connections])
      connection.close(CLOSE.serviceRestart, "the event feed was interrupted; resume with after");
  }

  /** Pings sockets that sent nothing since the last tick; drops those that did not answer it. */
  /**
   * Checks again the token of every authenticated connection, as a request would be checked now:
   * a token revoked (one token, or all of a user's), expired, or whose user was disabled, deleted
   * or given another role closes its connections with 4401. Revocation has no event of its own, so
   * this is how it reaches connections on every process; each distinct token is checked once per
   * round, one after another, so a round costs the database one lookup per token, spread out.
   */
  private async reauthenticateAll(): Promise<void> {
    const byToken = new Map<string, StreamConnection[]>();
    for (const connection of this.connections) {
      if (connection.closed || connection.token === undefined) continue;
      const sharing = byToken.get(connection.token);
      if (sharing) sharing.push(connection);
      else byToken.set(connection.token, [connection]);
    }
    for (const [token, sharing] of byToken) {
      let reason: string | undefined;
      try {
        await authenticateRequest(this.ctx, `Bearer ${token}`);
      } catch (error) {
        if (!isAppError(error) || error.code !== "unauthorized") {
          // The database is unreachable: keep the connections, check again next round.
          continue;
        }
        reason = error.message;
      }
      if (reason === undefined) continue;
      for (const connection of sharing)
        if (!connection.closed) connection.close(CLOSE.unauthorized, reason.slice(0, 120));
    }
  }

  private pingIdle(): void {
    for (const connection of [...this.connections]) {
      if (connection.closed) continue;
      if (connection.alive) {
        connection.alive = false;
        continue;
      }
      if (connection.pinged) {
        this.options.metrics.deadDropped.inc();
        connection.socket.terminate();
        continue;
      }
      connection.pinged = true;
      connection.socket.ping();
    }
  }
}

/** A gateway with its instruments on `registry`: counters, and gauges read from it at scrape time. */
export function createStreamGateway(
  ctx: AppContext,
  registry: client.Registry,
  options: Omit<StreamGatewayOptions, "metrics">,
): StreamGateway {
  const holder: { gateway?: StreamGateway } = {};
  const metrics = createStreamMetrics(registry, {
    connections: () => holder.gateway?.connectionCount ?? 0,
    subscriptions: () => holder.gateway?.subscriptionCount ?? 0,
    bufferedBytes: () => holder.gateway?.bufferedBytes() ?? 0,
  });
  holder.gateway = new StreamGateway(ctx, { ...options, metrics });
  return holder.gateway;
}
