import pg from "pg";

/**
 * The channel of one Parley install. NOTIFY channels are database-wide, so installs that share a
 * database in schemas of their own (and test files, each in its schema) would hear each other:
 * outside the `public` schema, the schema's name is part of the channel.
 */
export function channelFor(base: string, schema: string): string {
  if (schema === "public") return base;
  return `${base}_${schema.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`.slice(0, 63);
}

export interface ChannelListener {
  /** Stops listening and reconnecting; closes the connection. */
  close(): Promise<void>;
}

export interface ListenChannelOptions {
  /** Connection settings of the app's pool (same database, same search_path). */
  pgConfig: pg.ClientConfig & { max?: number };
  channel: string;
  /** Shown in pg_stat_activity, so an operator can tell the listening connection apart. */
  applicationName: string;
  /** Who listens, for the log ("webhook dispatcher", "stream"). */
  name: string;
  onNotify(payload: string): void;
  /**
   * The connection is (re)established and listening (`again` after a reconnect). Anything sent
   * while it was down was lost: the caller catches up here.
   */
  onListening(again: boolean): void;
  log: {
    warn(details: object, message: string): void;
    info(details: object, message: string): void;
  };
  /** First reconnect delay; doubles up to maxRetryMs. */
  minRetryMs?: number;
  maxRetryMs?: number;
}

/**
 * `LISTEN <channel>` on a dedicated connection, outside the pool (a pooled one would be handed to
 * other queries and lose the subscription). When the connection drops (database restart, network,
 * idle kill) it reconnects with back-off and listens again, for as long as the process runs. The
 * delivery engine's wake-ups and the live stream's bus both listen through this.
 */
export function listenOnChannel(options: ListenChannelOptions): ChannelListener {
  const minRetryMs = options.minRetryMs ?? 250;
  const maxRetryMs = options.maxRetryMs ?? 10_000;
  const { log, name } = options;
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = minRetryMs;
  let retryTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  let listenedBefore = false;

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
    const { max: _max, ...clientConfig } = options.pgConfig;
    const next = new pg.Client({ ...clientConfig, application_name: options.applicationName });
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
          `${name} lost its LISTEN connection; reconnecting`,
        );
      }
      scheduleReconnect();
    };
    next.on("error", onLost);
    next.on("end", () => onLost());
    next.on("notification", (message) => {
      if (message.channel === options.channel) options.onNotify(message.payload ?? "");
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${options.channel}`);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    if (failures > 0) log.info({}, `${name} is listening again`);
    failures = 0;
    retryMs = minRetryMs;
    const again = listenedBefore;
    listenedBefore = true;
    options.onListening(again);
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
