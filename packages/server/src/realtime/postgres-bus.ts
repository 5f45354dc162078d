import { CompiledQuery, sql, type Kysely } from "kysely";
import type pg from "pg";
import { channelFor, listenOnChannel, type ChannelListener } from "../db/listen-channel.js";
import type { Database } from "../db/schema.js";
import type { EventSpine, InTransactionHook } from "../events/event-spine.js";
import type { BusMessage, BusRelay, RealtimeBus } from "./realtime-bus.js";
import { endsUser, isFollowedEvent } from "./stream-frames.js";

/** The PostgreSQL channel of the live stream (suffixed with the schema outside `public`). */
export const STREAM_CHANNEL = "parley_stream";

const NOTIFY_SQL = "select pg_notify($1, $2)";

export interface PostgresBusOptions {
  db: Kysely<Database>;
  spine: EventSpine;
  pgConfig: pg.PoolConfig;
  log: { warn(object: object, message: string): void; info(object: object, message: string): void };
}

/**
 * The stream across processes on PostgreSQL.
 *
 * Events: a NOTIFY carrying `{event, data}` is sent INSIDE the transaction that emits the event
 * (a spine hook). PostgreSQL delivers a transaction's notifications only if it commits, and
 * delivers the notifications of different transactions in commit order, to every listening
 * session, the sender's own process included. So every process, this one too, learns of every
 * committed event through one path, in one order: no event rolled back, none out of order.
 * The price is PostgreSQL's notify lock, taken at each such commit (see docs/realtime.md for the
 * measured cost on the ingest path). Payloads are small (ids, usernames): the message itself is
 * loaded by each gateway, once per process.
 *
 * Signals, read markers, typing notices and rooms added: a NOTIFY outside any transaction
 * (nothing is stored).
 *
 * LISTEN runs on a dedicated connection. When it drops, notifications sent meanwhile are lost: it
 * reconnects with back-off and reports a gap, and the gateway asks its clients to resume.
 */
export function createPostgresBus(options: PostgresBusOptions): RealtimeBus {
  const { db, spine, log } = options;
  let listener: ChannelListener | undefined;
  let removeHook: (() => void) | undefined;
  /** Ends the wait for the first LISTEN when the bus closes before it ever listened. */
  let stopWaiting: (() => void) | undefined;

  /** This install's channel, known once the bus has started. */
  let channel = STREAM_CHANNEL;
  const notify = (executor: { executeQuery: Kysely<Database>["executeQuery"] }, payload: string) =>
    executor.executeQuery(CompiledQuery.raw(NOTIFY_SQL, [channel, payload]));

  function listen(onMessage: (message: BusMessage) => void, onGap: () => void): Promise<void> {
    return new Promise((resolveFirst) => {
      stopWaiting = resolveFirst;
      listener = listenOnChannel({
        pgConfig: options.pgConfig,
        channel,
        applicationName: "parley stream listener",
        name: "stream",
        onNotify(payload) {
          const decoded = payload ? decode(payload) : undefined;
          if (decoded) onMessage(decoded);
        },
        onListening(again) {
          if (again) onGap();
          resolveFirst();
        },
        log,
      });
    });
  }

  return {
    async start(onMessage, onGap) {
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
      channel = channelFor(STREAM_CHANNEL, rows[0]?.schema ?? "public");
      removeHook = spine.onEmitInTransaction(streamNotification(channel));
      await listen(onMessage, onGap);
    },
    async publish(message: BusRelay) {
      await notify(db, encodeRelay(message));
    },
    async close() {
      removeHook?.();
      await listener?.close();
      stopWaiting?.();
    },
  };
}

/** The NOTIFY, sent inside the emitting transaction, that tells every process of `event`. */
export function streamNotification(channel: string): InTransactionHook {
  return (event, data) => {
    if (isFollowedEvent(event))
      return { channel, payload: JSON.stringify({ k: "e", e: event, d: data }) };
    if (endsUser(event))
      return {
        channel,
        payload: JSON.stringify({ k: "u", u: (data as { username: string }).username }),
      };
    return undefined;
  };
}

function encodeRelay(message: BusRelay): string {
  switch (message.kind) {
    case "signal":
      return JSON.stringify({
        k: "s",
        r: message.roomId,
        f: message.from,
        t: message.to,
        p: message.payload,
      });
    case "read":
      return JSON.stringify({
        k: "r",
        r: message.roomId,
        u: message.username,
        m: message.messageId,
      });
    case "typing":
      return JSON.stringify({ k: "t", r: message.roomId, u: message.username });
    case "room-added":
      return JSON.stringify({
        k: "a",
        r: message.roomId,
        u: message.username,
        rk: message.roomKind,
        b: message.by,
      });
  }
}

function decode(payload: string): BusMessage | undefined {
  try {
    const value = JSON.parse(payload) as Record<string, unknown>;
    if (value.k === "e" && typeof value.e === "string" && isFollowedEvent(value.e))
      return { kind: "event", event: value.e, data: value.d as { roomId: number } };
    if (value.k === "u" && typeof value.u === "string")
      return { kind: "user-ended", username: value.u };
    if (value.k === "r")
      return {
        kind: "read",
        roomId: value.r as number,
        username: value.u as string,
        messageId: value.m as number,
      };
    if (value.k === "t")
      return { kind: "typing", roomId: value.r as number, username: value.u as string };
    if (value.k === "a")
      return {
        kind: "room-added",
        roomId: value.r as number,
        username: value.u as string,
        roomKind: value.rk === "dm" ? "dm" : "room",
        by: value.b as string,
      };
    if (value.k === "s")
      return {
        kind: "signal",
        roomId: value.r as number,
        from: value.f as string,
        to: value.t as string,
        payload: value.p,
      };
  } catch {
    // Not ours (someone else NOTIFYing on the channel): ignore.
  }
  return undefined;
}
