import type pg from "pg";
import { listenOnChannel, type ChannelListener } from "../../../db/listen-channel.js";
import { DELIVERIES_CHANNEL } from "../../../events/event-spine.js";
import type { DeliveryLog } from "./delivery-log.js";

export type DeliveriesListener = ChannelListener;

export interface DeliveriesListenerOptions {
  /** Connection settings of the app's pool (same database, same search_path). */
  pgConfig: pg.ClientConfig;
  /** Shown in pg_stat_activity, so an operator can tell the listening connection apart. */
  applicationName?: string;
  /** A NOTIFY arrived: deliveries were committed by some process. */
  onNotify(): void;
  /**
   * This process's name in NOTIFY payloads: its own notifications are skipped (its commits woke
   * its dispatcher in process already, so each would only cost an empty claim).
   */
  ignoreFrom?: string;
  /**
   * The connection is (re)established and listening. Anything committed while it was down sent a
   * NOTIFY nobody heard, so the caller runs a full claim pass here.
   */
  onListening(): void;
  log: DeliveryLog;
  /** First reconnect delay; doubles up to maxRetryMs. */
  minRetryMs?: number;
  maxRetryMs?: number;
}

/**
 * `LISTEN parley_deliveries` on a dedicated connection, reconnecting for as long as the process
 * runs (db/listen-channel.ts): how other processes' commits wake this process's dispatcher.
 */
export function listenForDeliveries(options: DeliveriesListenerOptions): DeliveriesListener {
  return listenOnChannel({
    pgConfig: options.pgConfig,
    channel: DELIVERIES_CHANNEL,
    applicationName: options.applicationName ?? "parley deliveries listener",
    name: "webhook dispatcher",
    onNotify(payload) {
      if (options.ignoreFrom !== undefined && payload === options.ignoreFrom) return;
      options.onNotify();
    },
    onListening: () => options.onListening(),
    log: options.log,
    ...(options.minRetryMs !== undefined ? { minRetryMs: options.minRetryMs } : {}),
    ...(options.maxRetryMs !== undefined ? { maxRetryMs: options.maxRetryMs } : {}),
  });
}
