/**
 * A raw client of GET /api/stream for tests: every frame it receives is recorded in order, and a
 * test waits for the frame it expects (never for a clock window).
 *
 *   const s = await openStream(origin);           // subprotocol parley.v1
 *   s.send({ type: "auth", token });
 *   await s.next((f) => f.type === "ready");
 *   const { code } = await s.closed;
 */
import WebSocket from "ws";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Frame = Record<string, any>;

export interface StreamSocket {
  readonly ws: WebSocket;
  /** Every frame received so far. */
  readonly frames: Frame[];
  send(frame: unknown): void;
  /**
   * The next frame after the last one `next` returned that matches `predicate` (frames in between
   * are passed over, and stay in `frames`). Rejects after `timeoutMs` (default 5 s).
   */
  next(predicate?: (frame: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  /** Resolves once `condition` holds for the frames received so far. */
  until(condition: (frames: Frame[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when the socket closes. */
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export async function openStream(
  origin: string,
  options: { protocol?: string | null; headers?: Record<string, string> } = {},
): Promise<StreamSocket> {
  const protocol = options.protocol === undefined ? "parley.v1" : options.protocol;
  const url = `${origin.replace(/^http/, "ws")}/api/stream`;
  const init = options.headers ? { headers: options.headers } : {};
  const ws = protocol === null ? new WebSocket(url, init) : new WebSocket(url, protocol, init);
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  let cursor = 0;
  ws.on("message", (data) => {
    frames.push(JSON.parse(data.toString()) as Frame);
    for (const wake of [...waiters]) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once("close", (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of [...waiters]) wake();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return {
    ws,
    frames,
    closed,
    send: (frame) => ws.send(JSON.stringify(frame)),
    next(predicate = () => true, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          for (let i = cursor; i < frames.length; i++) {
            if (predicate(frames[i]!)) {
              cursor = i + 1;
              waiters.delete(check);
              clearTimeout(timer);
              resolve(frames[i]!);
              return;
            }
          }
          if (ws.readyState === WebSocket.CLOSED) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`socket closed; frames: ${JSON.stringify(frames.slice(cursor))}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no matching frame in ${timeoutMs} ms; got ${JSON.stringify(frames.slice(cursor))}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    until(condition, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (condition(frames)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`condition not met in ${timeoutMs} ms; frames: ${JSON.stringify(frames)}`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      ws.close();
      await closed;
    },
  };
}

/** Opens a stream and authenticates: resolves after the `ready` frame. */
export async function openAuthenticated(origin: string, token: string): Promise<StreamSocket> {
  const socket = await openStream(origin);
  socket.send({ type: "auth", token });
  await socket.next((frame) => frame.type === "ready");
  return socket;
}

/** Subscribes and resolves with the `subscribed` frame. */
export async function subscribe(
  socket: StreamSocket,
  roomId: number,
  after?: number,
): Promise<Frame> {
  socket.send(
    after === undefined ? { type: "subscribe", roomId } : { type: "subscribe", roomId, after },
  );
  return socket.next(
    (frame) => (frame.type === "subscribed" || frame.type === "error") && frame.roomId === roomId,
  );
}

/** The message ids of the MESSAGE_CREATED event frames `socket` has received, in order. */
export function createdMessageIds(socket: StreamSocket): number[] {
  return socket.frames
    .filter((frame) => frame.type === "event" && frame.event === "MESSAGE_CREATED")
    .map((frame) => frame.data.messageId as number);
}
