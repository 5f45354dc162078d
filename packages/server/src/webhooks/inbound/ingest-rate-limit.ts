import type { FastifyRateLimitStore } from "@fastify/rate-limit";
import type { FastifyBaseLogger } from "fastify";
import { Redis } from "ioredis";

/** Requests counted in the current window for a key, and milliseconds until that window ends. */
export interface WindowCount {
  current: number;
  ttl: number;
}

type IncrCallback = (error: Error | null, result?: WindowCount) => void;

/**
 * Fixed windows in process memory: the store without Redis, and the fallback while Redis is down.
 * Bounded: past `maxKeys`, expired windows are dropped first, then the oldest.
 */
export class MemoryWindows {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly maxKeys = 100_000) {}

  incr(key: string, windowMs: number, now = Date.now()): WindowCount {
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      if (window !== undefined) this.windows.delete(key);
      else if (this.windows.size >= this.maxKeys) this.evict(now);
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count++;
    return { current: window.count, ttl: window.resetAt - now };
  }

  private evict(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
    const target = Math.floor(this.maxKeys * 0.9);
    for (const key of this.windows.keys()) {
      if (this.windows.size <= target) break;
      this.windows.delete(key);
    }
  }
}

// One round trip: count, start the window on the first hit, and report the time left. The PTTL
// guard re-arms a key that somehow lost its expiry, so it can never lock a token out for good.
const COUNT_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}
`;

interface CountingRedis extends Redis {
  parleyIngestCount(key: string, windowMs: number): Promise<[number, number]>;
}

export interface IngestRateLimiterOptions {
  /** redis://... shares the counts between processes; unset counts in this process only. */
  redisUrl?: string | undefined;
  /** The policy's window (`PARLEY_RATE_LIMIT_WEBHOOK_INGEST`). */
  windowMs: number;
  /** Prefix of every Redis key (`PARLEY_REDIS_KEY_PREFIX`). */
  keyPrefix: string;
  log: FastifyBaseLogger;
  /** How long startup waits for Redis, and how long one count may take, before falling back. */
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

export interface IngestRateLimiter {
  /** A class for @fastify/rate-limit's `store` option; every instance shares these counts. */
  readonly Store: new () => FastifyRateLimitStore;
  count(key: string): Promise<WindowCount>;
  close(): Promise<void>;
}

/**
 * The `webhook_ingest` counter. With Redis it is shared by every process; when Redis cannot
 * answer (down, slow, not yet connected) it FAILS OPEN to in-memory windows, logging one warning
 * per outage: an outage of the rate-limit store must not take ingest down with it. While degraded,
 * each process enforces the limit on its own share of the traffic.
 */
export async function createIngestRateLimiter(
  options: IngestRateLimiterOptions,
): Promise<IngestRateLimiter> {
  const memory = new MemoryWindows();
  const { log } = options;
  let redis: CountingRedis | undefined;
  let degraded = false;
  const fallBack = (reason: string) => {
    if (degraded) return;
    degraded = true;
    log.warn(
      { reason },
      "Redis is unreachable: ingest rate limits are counted per process until it is back",
    );
  };

  if (options.redisUrl) {
    const connectTimeout = options.connectTimeoutMs ?? 2000;
    const commandTimeout = options.commandTimeoutMs ?? 500;
    redis = new Redis(options.redisUrl, {
      lazyConnect: true,
      // Never queue a count behind a dead connection: fail at once and use memory instead.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout,
      commandTimeout,
      // How long a closing connection may take to end before it is destroyed (ioredis: 2 s). A
      // close during the handshake ends the stream twice, and the second wait never sees a
      // 'close' event: the timer would keep the process up for its full length after close().
      disconnectTimeout: commandTimeout,
      retryStrategy: (attempt) => Math.min(attempt * 250, 5000),
    }) as CountingRedis;
    redis.defineCommand("parleyIngestCount", { numberOfKeys: 1, lua: COUNT_SCRIPT });
    redis.on("error", (error: Error) => fallBack(error.message));
    redis.on("ready", () => {
      if (!degraded) return;
      degraded = false;
      log.info("Redis is reachable again: ingest rate limits are shared between processes");
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        redis.connect(),
        new Promise((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${connectTimeout} ms`)),
            connectTimeout,
          );
        }),
      ]);
    } catch (error) {
      fallBack(error instanceof Error ? error.message : String(error));
    } finally {
      clearTimeout(timer);
    }
  }

  const prefix = `${options.keyPrefix}ingest:`;
  const { windowMs } = options;
  const count = async (key: string): Promise<WindowCount> => {
    if (redis?.status === "ready") {
      try {
        const [current, ttl] = await redis.parleyIngestCount(prefix + key, windowMs);
        return { current, ttl };
      } catch (error) {
        fallBack(error instanceof Error ? error.message : String(error));
      }
    } else if (redis) {
      fallBack(`connection ${redis.status}`);
    }
    return memory.incr(key, windowMs);
  };

  class IngestRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, callback: IncrCallback): void {
      if (!redis) {
        callback(null, memory.incr(key, windowMs));
        return;
      }
      void count(key).then((result) => callback(null, result));
    }
    // The native and Slack routes share one bucket per token, so no per-route child stores.
    child(): FastifyRateLimitStore {
      return this;
    }
  }

  return {
    Store: IngestRateLimitStore,
    count,
    async close() {
      if (!redis) return;
      const client = redis;
      redis = undefined;
      if (client.status === "ready") await client.quit().catch(() => undefined);
      client.disconnect();
    },
  };
}
