import pg from "pg";
import { DELIVERIES_CHANNEL } from "../../events/event-spine.js";
import type { DeliveryLog } from "./delivery-log.js";

export interface DeliveriesListener {
  /** Stops listening and reconnecting; closes the connection. */
  close(): Promise<void>;
}

export interface DeliveriesListenerOptions {
  /** Connection settings of the app's pool (same database, same search_path). */
  pgConfig: pg.ClientConfig;
  /** Shown in pg_stat_activity, so an operator can tell the listening connection apart. */
  applicationName?: string;
  /** A NOTIFY arrived: deliveries were committed by some process. */
  onNotify(): void;
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
 * `LISTEN parley_deliveries` on a dedicated connection (a pooled one would be handed to other
 * queries and lose the subscription). When the connection drops (database restart, network, idle
 * kill) it reconnects with back-off and listens again, for as long as the process runs.
 */
export function listenForDeliveries(options: DeliveriesListenerOptions): DeliveriesListener {
  const minRetryMs = options.minRetryMs ?? 250;
  const maxRetryMs = options.maxRetryMs ?? 10_000;
  const { log } = options;
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = minRetryMs;
  let retryTimer: NodeJS.Timeout | undefined;
  let failures = 0;

  const scheduleReconnect = () => {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, retryMs);
    retryMs = Math.min(retryMs * 2, maxRetryMs);
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const { max: _max, ...clientConfig } = options.pgConfig as pg.PoolConfig;
    const next = new pg.Client({
      ...clientConfig,
      ...(options.applicationName ? { application_name: options.applicationName } : {}),
    });
    client = next;
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      next.removeAllListeners("notification");
      // Keep a listener so a late error on the dead connection cannot crash the process.
      next.on("error", () => {});
      next.end().catch(() => {});
      if (closed) return;
      failures++;
      if (failures === 1 || failures % 20 === 0) {
        log.warn(
          { err: error?.message ?? "connection ended" },
          "webhook dispatcher lost its LISTEN connection; reconnecting",
        );
      }
      scheduleReconnect();
    };
    next.on("error", onLost);
    next.on("end", () => onLost());
    next.on("notification", (message) => {
      if (message.channel === DELIVERIES_CHANNEL) options.onNotify();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    if (failures > 0) log.info({}, "webhook dispatcher is listening again");
    failures = 0;
    retryMs = minRetryMs;
    options.onListening();
  }

  void connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const current = client;
      client = undefined;
      if (current) {
        current.removeAllListeners("end");
        current.on("error", () => {});
        await current.end().catch(() => {});
      }
    },
  };
}
