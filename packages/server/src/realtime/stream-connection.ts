import type { WebSocket } from "ws";
import type { Principal } from "../auth/principal.js";
import { prepareTextFrame, type PreparedFrame } from "./prepared-frame.js";
import { CLOSE } from "./stream-frames.js";

/** A subscribed room of one connection. */
export interface Subscription {
  roomId: number;
  /**
   * While the `subscribed` frame and the resumed messages are being sent, live frames of the room
   * wait here; afterwards they go out in order, minus the messages the resume already sent.
   */
  pending: Array<{ frame: Frame; messageId?: number }> | undefined;
  /** The bytes of `pending`'s frames (they count against the connection's bound). */
  heldBytes: number;
  /**
   * Messages the resume sent. Their live frames may still come (on PostgreSQL a notification can
   * arrive after the read that already saw its row): each is dropped once, when it does.
   */
  replayed: Set<number> | undefined;
}

/** A frame's text, or the frame prepared once for the many sockets it goes to. */
export type Frame = string | PreparedFrame;

/** The parts of a `ws` socket the fast path uses (not in its public API; checked before use). */
interface WsInternals {
  _socket?: {
    write(bytes: Buffer): boolean;
    once(event: "drain", listener: () => void): unknown;
    off(event: "drain", listener: () => void): unknown;
  };
  _sender?: { _state?: number; _queue?: unknown[] };
}

/**
 * While a resume sends (waitToSend), it fills the client's unread bytes up to half the bound, then
 * waits for them to fall to an eighth: the reader has room left for the room's live frames, and
 * each wait lets several frames go at once.
 */
const RESUME_HIGH_WATER = 1 / 2;
const RESUME_LOW_WATER = 1 / 8;
/** How often a waiting resume looks again when no 'drain' came (frames still queued, say). */
const DRAIN_POLL_MS = 20;

/**
 * How long the stream waits after a flush, in multiples of that flush's own duration: writing then
 * takes at most a quarter of the time however many clients there are, and a stream whose flushes
 * are quick (few clients) does not wait at all.
 */
const WAIT_PER_FLUSH_TIME = 3;

/**
 * Writes the frames connections queued, for all of them at once: one write per connection per
 * flush, however many frames it queued. A flush runs after the event-loop turn that queued the
 * first frame (setImmediate); after a flush that took d ms, the next waits 3 × d, and never more
 * than `maxDelayMs`. A frame that finds the stream idle leaves at once; frames of a
 * busy stream with many clients wait up to that long and then share one write (one system call per
 * client instead of one per frame: a socket write costs far more than the bytes it carries).
 * Connections that queued the same frames in the same order (every subscriber of a room, usually)
 * are written the same joined bytes, joined once.
 */
export class FrameFlusher {
  private queued: StreamConnection[] = [];
  private scheduled = false;
  private nextFlush = -Infinity;

  constructor(
    private readonly maxDelayMs = 0,
    /** Told after each flush how many socket writes it made. */
    private readonly onFlushed: (writes: number) => void = () => {},
  ) {}

  /** Called by a connection when its queue goes from empty to one frame. */
  schedule(connection: StreamConnection): void {
    this.queued.push(connection);
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = this.nextFlush - performance.now();
    if (wait >= 1) setTimeout(this.flush, wait);
    else setImmediate(this.flush);
  }

  /** Writes every queued frame now. */
  readonly flush = (): void => {
    this.scheduled = false;
    const started = performance.now();
    const queued = this.queued;
    this.queued = [];
    const joined = new JoinedFrames();
    let writes = 0;
    for (const connection of queued) writes += connection.flush(joined);
    const ended = performance.now();
    this.nextFlush = ended + Math.min(this.maxDelayMs, WAIT_PER_FLUSH_TIME * (ended - started));
    this.onFlushed(writes);
  };
}

/** The frames of one flush joined into one buffer, once per distinct sequence of frames. */
export class JoinedFrames {
  private readonly byFirst = new Map<
    PreparedFrame,
    Array<{ frames: PreparedFrame[]; wire: Buffer }>
  >();

  get(frames: PreparedFrame[]): Buffer {
    if (frames.length === 1) return frames[0]!.wire;
    let candidates = this.byFirst.get(frames[0]!);
    if (!candidates) this.byFirst.set(frames[0]!, (candidates = []));
    for (const candidate of candidates) {
      if (candidate.frames.length !== frames.length) continue;
      let same = true;
      for (let i = 1; same && i < frames.length; i++) same = candidate.frames[i] === frames[i];
      if (same) return candidate.wire;
    }
    const wire = Buffer.concat(frames.map((frame) => frame.wire));
    // Sequences that differ (a reply to one client among the room's frames) are joined for their
    // connection alone; a few are kept, so the search stays short however many there are.
    if (candidates.length < 8) candidates.push({ frames, wire });
    return wire;
  }
}

/**
 * One WebSocket of the stream: who it is (after the auth frame), what it is subscribed to, and a
 * bounded send queue. Frames wait in `queue` until the flusher writes them (see FrameFlusher), and
 * then in `ws`, whose `bufferedAmount` is what the client has not read yet; past `maxBufferedBytes`
 * of both together, with the live frames held back while a subscription catches up, the reader is
 * too slow and is dropped (it reconnects and resumes with `after`), so a stalled client never
 * makes the server hold an unbounded backlog.
 */
export class StreamConnection {
  principal: Principal | undefined;
  /** The token of the auth frame, checked again every PARLEY_STREAM_REAUTHENTICATE_MS. */
  token: string | undefined;
  /** The session cookie of a same-origin upgrade: what an auth frame with an empty token uses. */
  sessionCookie: string | undefined;
  readonly subscriptions = new Map<number, Subscription>();
  /** Set by any frame or pong from the client; cleared by each heartbeat tick. */
  alive = true;
  /** A ping went out and no answer came yet. */
  pinged = false;
  closed = false;
  private queue: PreparedFrame[] = [];
  private queuedBytes = 0;
  /** The bytes of the live frames held back while subscriptions catch up (Subscription.pending). */
  private heldBytes = 0;

  constructor(
    readonly socket: WebSocket,
    private readonly maxBufferedBytes: number,
    private readonly onDropped: () => void,
    private readonly flusher: FrameFlusher = new FrameFlusher(),
  ) {}

  /** Queues one text frame; false when the connection is gone or was dropped for being slow. */
  send(frame: Frame): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    const prepared = typeof frame === "string" ? prepareTextFrame(frame) : frame;
    if (this.bufferedBytes() + this.heldBytes + prepared.length > this.maxBufferedBytes) {
      this.dropAsTooSlow();
      return false;
    }
    this.queue.push(prepared);
    this.queuedBytes += prepared.length;
    if (this.queue.length === 1) this.flusher.schedule(this);
    return true;
  }

  sendJson(frame: object): boolean {
    return this.send(JSON.stringify(frame));
  }

  /** Writes the queued frames (called by the flusher); gives the number of socket writes. */
  flush(joined: JoinedFrames): number {
    const frames = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    if (frames.length === 0 || this.closed || this.socket.readyState !== this.socket.OPEN) return 0;
    const { _socket: raw, _sender: sender } = this.socket as unknown as WsInternals;
    if (raw && sender?._state === 0 && sender._queue?.length === 0) {
      // ws writes each frame synchronously while its sender is idle (state 0, nothing queued: no
      // compression, which the server never negotiates, and no Blob being read), so writing our
      // prepared bytes here cannot interleave with one of its frames; bufferedAmount still counts
      // them.
      raw.write(joined.get(frames));
      return 1;
    }
    for (const frame of frames)
      this.socket.send(frame.wire.subarray(frame.wire.length - frame.length), { binary: false });
    return frames.length;
  }

  /** Delivers a frame of a subscribed room, holding it back while the room is catching up. */
  sendRoomFrame(roomId: number, frame: Frame, messageId?: number): void {
    const subscription = this.subscriptions.get(roomId);
    if (!subscription) return;
    if (subscription.pending) {
      // Held frames are memory too: a room busier than its reader reads ends as a slow reader.
      const bytes = typeof frame === "string" ? Buffer.byteLength(frame) : frame.length;
      if (this.bufferedBytes() + this.heldBytes + bytes > this.maxBufferedBytes) {
        this.dropAsTooSlow();
        return;
      }
      subscription.pending.push(messageId === undefined ? { frame } : { frame, messageId });
      subscription.heldBytes += bytes;
      this.heldBytes += bytes;
      return;
    }
    if (messageId !== undefined && subscription.replayed?.delete(messageId)) return;
    this.send(frame);
  }

  /**
   * Ends the holding back of `subscription`'s live frames, giving them (in order) to the caller.
   */
  release(subscription: Subscription): Array<{ frame: Frame; messageId?: number }> {
    const pending = subscription.pending ?? [];
    subscription.pending = undefined;
    this.heldBytes -= subscription.heldBytes;
    subscription.heldBytes = 0;
    return pending;
  }

  bufferedBytes(): number {
    return this.closed ? 0 : this.socket.bufferedAmount + this.queuedBytes;
  }

  /**
   * For a resume, which sends more than the bound holds: resolves once a frame of `bytes` fits
   * under half the bound, waiting, when it does not, until the client has read all but an eighth
   * of what it was sent. False when the connection closed meanwhile (a client that reads nothing
   * answers no ping either, and is cut off by the heartbeat). A client that reads is alive.
   */
  async waitToSend(bytes: number): Promise<boolean> {
    const high = this.maxBufferedBytes * RESUME_HIGH_WATER;
    if (this.bufferedBytes() + bytes <= high) return !this.closed;
    const low = this.maxBufferedBytes * RESUME_LOW_WATER;
    let unread = this.bufferedBytes();
    while (!this.closed && unread > low) {
      await this.drainOrTimeout(DRAIN_POLL_MS);
      const now = this.bufferedBytes();
      if (now < unread) this.alive = true;
      unread = now;
    }
    return !this.closed;
  }

  /** Resolves when the socket's write buffer empties, or after `ms`. */
  private drainOrTimeout(ms: number): Promise<void> {
    const raw = (this.socket as unknown as WsInternals)._socket;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        raw?.off("drain", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      raw?.once("drain", done);
    });
  }

  private dropAsTooSlow(): void {
    this.onDropped();
    this.close(CLOSE.tooSlow, "too slow: send queue full; reconnect and resume with after");
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    // What was queued before the close goes out before it (an error frame, say).
    this.flush(new JoinedFrames());
    this.closed = true;
    this.socket.close(code, reason);
    // A peer that never answers the close handshake is cut off.
    setTimeout(() => this.socket.terminate(), 2_000).unref();
  }
}
