/**
 * The lease watch: how a dispatcher learns of a lease another process took after its own last
 * look-up of the next due time, before that lease runs out.
 *
 * A dispatcher looks up the next due time (next-due-time.ts: the next retry, or the end of the
 * earliest lease) after each sweep, timer or reconnect pass, and arms its retry timer to it; that
 * is how it claims a crashed process's deliveries the moment their lease ends. But another process
 * claims rows at any time (a NOTIFY only says that deliveries were queued, not who took them, and
 * retries and backlogs are claimed without one), so a lease taken just after a look-up is seen
 * only at the next one. The rule: **every process looks up the next due time at least every half
 * lease**. A lease is then seen while at least half of it is left, and its rows are claimed
 * again within the lease (plus the claim's own time) of the claim that took them, whichever
 * process dies. The sweep is such a look-up when it runs that often; otherwise this watch looks
 * up (and claims nothing) every half lease in between.
 *
 * Leases are `leaseFor(PARLEY_WEBHOOK_TIMEOUT_MS)`: processes sharing a database are expected to
 * run with the same time-out, so each one's half lease is every lease's half.
 */
export interface LeaseWatchOptions {
  leaseMs: number;
  sweepIntervalMs: number;
  /** The next due time after `now` (DeliveryQueue.nextDueTime). */
  nextDueAt(now: number): Promise<number | null>;
  now(): number;
  /** Arms the dispatcher's retry timer (the earliest wins). */
  onDue(at: number): void;
}

export interface LeaseWatch {
  /** Stops the watch and waits for a look-up in flight. */
  stop(): Promise<void>;
}

/** How often the lease watch looks, when the sweep does not run that often: half a lease. */
export function leaseWatchIntervalMs(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 2));
}

export function watchLeases(options: LeaseWatchOptions): LeaseWatch {
  const everyMs = leaseWatchIntervalMs(options.leaseMs);
  if (options.sweepIntervalMs <= everyMs) return { stop: async () => undefined };
  let stopped = false;
  let lookingUp: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (stopped || lookingUp) return;
    lookingUp = options
      .nextDueAt(options.now())
      .then(
        (at) => {
          if (at !== null && !stopped) options.onDue(at);
        },
        // The claim loop reports an unreachable database (and retries); the next look-up is
        // only half a lease away.
        () => undefined,
      )
      .finally(() => {
        lookingUp = undefined;
      });
  }, everyMs);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await lookingUp;
    },
  };
}
