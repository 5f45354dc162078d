import type { WebSocket } from "ws";
import type { Principal } from "../auth/principal.js";
import type { PreparedFrame } from "./prepared-frame.js";
import { CLOSE } from "./stream-frames.js";

/** A subscribed room of one connection. */
export interface Subscription {
  roomId: number;
  /**
   * While the `subscribed` frame and the resumed messages are being sent, live frames of the room
   * wait here; afterwards they go out in order, minus the messages the resume already sent.
   */
  pending: Array<{ frame: Frame; messageId?: number }> | undefined;
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
  _socket?: { cork(): void; uncork(): void; write(bytes: Buffer): boolean };
  _sender?: { _state?: number; _queue?: unknown[] };
}

/**
 * One WebSocket of the stream: who it is (after the auth frame), what it is subscribed to, and a
 * bounded send queue. Frames go to `ws`, whose `bufferedAmount` is what the client has not read
 * yet; past `maxBufferedBytes` the reader is too slow and is dropped (it reconnects and resumes with
 * `after`), so a stalled client never makes the server hold an unbounded backlog.
 *
 * Frames queued in one event-loop turn leave in one write: the socket is corked until the turn
 * ends, so a burst of events costs each client one system call instead of one per frame (the
 * `stream` benchmark's fan-out to 2,000 clients is bound by those calls).
 */
export class StreamConnection {
  principal: Principal | undefined;
  readonly subscriptions = new Map<number, Subscription>();
  /** Set by any frame or pong from the client; cleared by each heartbeat tick. */
  alive = true;
  /** A ping went out and no answer came yet. */
  pinged = false;
  closed = false;

  constructor(
    readonly socket: WebSocket,
    private readonly maxBufferedBytes: number,
    private readonly onDropped: () => void,
  ) {}

  private corked = false;

  /** Sends one text frame; false when the connection is gone or was dropped for being slow. */
  send(frame: Frame): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    if (this.socket.bufferedAmount + frame.length > this.maxBufferedBytes) {
      this.onDropped();
      this.close(CLOSE.tooSlow, "too slow: send queue full; reconnect and resume with after");
      return false;
    }
    const { _socket: raw, _sender: sender } = this.socket as unknown as WsInternals;
    if (!this.corked) {
      if (raw) {
        raw.cork();
        this.corked = true;
        setImmediate(() => {
          this.corked = false;
          raw.uncork();
        });
      }
    }
    if (typeof frame === "string") {
      this.socket.send(frame);
    } else if (raw && sender?._state === 0 && sender._queue?.length === 0) {
      // ws writes each frame synchronously while its sender is idle (state 0, nothing queued: no
      // compression, which the server never negotiates, and no Blob being read), so writing our
      // prepared bytes here cannot interleave with one of its frames; bufferedAmount still counts
      // them. On the stream benchmark this halved post-to-frame latency against ws.send().
      raw.write(frame.wire);
    } else {
      this.socket.send(frame.wire.subarray(frame.wire.length - frame.length), { binary: false });
    }
    return true;
  }

  sendJson(frame: object): boolean {
    return this.send(JSON.stringify(frame));
  }

  /** Delivers a frame of a subscribed room, holding it back while the room is catching up. */
  sendRoomFrame(roomId: number, frame: Frame, messageId?: number): void {
    const subscription = this.subscriptions.get(roomId);
    if (!subscription) return;
    if (subscription.pending) {
      subscription.pending.push(messageId === undefined ? { frame } : { frame, messageId });
      return;
    }
    if (messageId !== undefined && subscription.replayed?.delete(messageId)) return;
    this.send(frame);
  }

  bufferedBytes(): number {
    return this.closed ? 0 : this.socket.bufferedAmount;
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close(code, reason);
    // A peer that never answers the close handshake is cut off.
    setTimeout(() => this.socket.terminate(), 2_000).unref();
  }
}
