import type { AppContext } from "../app-context.js";
import { eventData } from "../events/event-catalogue.js";
import { leaveCallIn } from "./calls-service.js";
import {
  addConnection,
  endDuePresence,
  forgetDeadInstances,
  heartbeat,
  nextLeaveAt,
  reconcilePresence,
  removeConnection,
  removeInstance,
  type PresenceTiming,
} from "./presence-repository.js";

export interface PresenceTrackerOptions {
  log: { warn(object: object, message: string): void };
}

interface Holder {
  roomId: number;
  userId: number;
  username: string;
  connections: number;
  /** Database writes for this (room, user), one at a time and in order. */
  chain: Promise<void>;
}

/**
 * Presence of this process's connections, kept in the database so that every process agrees
 * (docs/realtime.md, "Presence"). In memory: how many of this process's connections each user has
 * subscribed to each room; only the first (0 -> 1) and the last (1 -> 0) touch the database.
 * A heartbeat keeps this process's rows alive; a sweep (every process runs one) starts the grace of
 * presences whose process died, and ends the presences whose grace ran out, firing USER_LEFT_ROOM
 * (and the call leave) exactly once, through the spine like any event.
 */
export class PresenceTracker {
  private readonly holders = new Map<string, Holder>();
  private readonly graceMs: number;
  private readonly heartbeatMs: number;
  private readonly expiryMs: number;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweepAt = Infinity;
  private sweeping: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly options: PresenceTrackerOptions,
  ) {
    this.graceMs = ctx.config.presenceGraceMs;
    this.heartbeatMs = ctx.config.presenceHeartbeatMs;
    this.expiryMs = 3 * this.heartbeatMs;
  }

  private timing(): PresenceTiming {
    return { now: this.ctx.now(), expiryMs: this.expiryMs, graceMs: this.graceMs };
  }

  async start(): Promise<void> {
    await heartbeat(this.ctx.db, this.ctx.instanceId, this.ctx.now());
    this.heartbeatTimer = setInterval(() => void this.beat(), this.heartbeatMs);
    this.heartbeatTimer.unref();
    // Presences left behind by a previous run of this process (or a dead peer) end in time.
    this.scheduleSweep(0);
  }

  /** A connection of `user` subscribed to `roomId`; resolves once its presence is recorded. */
  connect(roomId: number, user: { userId: number; username: string }): Promise<void> {
    const key = `${roomId}:${user.userId}`;
    let holder = this.holders.get(key);
    if (!holder) {
      holder = {
        roomId,
        userId: user.userId,
        username: user.username,
        connections: 0,
        chain: Promise.resolve(),
      };
      this.holders.set(key, holder);
    }
    holder.connections++;
    if (holder.connections > 1) return holder.chain;
    return this.enqueue(holder, async () => {
      await this.ctx.database.transaction(async (tx) => {
        const joined = await addConnection(tx.db, this.ctx.instanceId, holder, this.ctx.now());
        if (joined)
          await tx.emit(
            "USER_JOINED_ROOM",
            eventData.roomMembership({ roomId, username: user.username, via: "presence" }),
          );
      });
    });
  }

  /** A connection of the user unsubscribed from `roomId` or went away. */
  disconnect(roomId: number, userId: number): Promise<void> {
    const key = `${roomId}:${userId}`;
    const holder = this.holders.get(key);
    if (!holder || holder.connections === 0) return Promise.resolve();
    holder.connections--;
    if (holder.connections > 0) return holder.chain;
    return this.enqueue(holder, async () => {
      await removeConnection(this.ctx.db, this.ctx.instanceId, holder, this.timing());
      this.scheduleSweep(this.graceMs);
    }).finally(() => {
      if (holder.connections === 0 && this.holders.get(key) === holder) {
        // Drop the entry once nothing more is queued on it.
        void holder.chain.then(() => {
          if (holder.connections === 0 && this.holders.get(key) === holder)
            this.holders.delete(key);
        });
      }
    });
  }

  private enqueue(holder: Holder, work: () => Promise<void>): Promise<void> {
    const run = holder.chain.then(work).catch((error: unknown) => {
      this.options.log.warn({ err: (error as Error).message }, "could not record presence");
    });
    holder.chain = run;
    return run;
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    try {
      const known = await heartbeat(this.ctx.db, this.ctx.instanceId, this.ctx.now());
      if (!known) {
        // Taken for dead (a long pause) and forgotten: write this process's connections again.
        for (const holder of this.holders.values())
          if (holder.connections > 0)
            await this.ctx.database.transaction((tx) =>
              addConnection(tx.db, this.ctx.instanceId, holder, this.ctx.now()).then(
                () => undefined,
              ),
            );
      }
    } catch (error) {
      this.options.log.warn({ err: (error as Error).message }, "presence heartbeat failed");
    }
    this.scheduleSweep(0);
  }

  /** Runs the sweep in `delayMs` unless one is already due sooner. */
  private scheduleSweep(delayMs: number): void {
    if (this.stopped) return;
    const at = this.ctx.now() + delayMs;
    if (this.sweepTimer && at >= this.sweepAt) return;
    clearTimeout(this.sweepTimer);
    this.sweepAt = at;
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = undefined;
      this.sweepAt = Infinity;
      void this.sweep();
    }, delayMs);
    this.sweepTimer.unref();
  }

  /** Reconciles leave times, ends due presences (firing their events), and wakes at the next one. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        const timing = this.timing();
        await reconcilePresence(this.ctx.db, timing);
        await this.ctx.database.transaction(async (tx) => {
          for (const ended of await endDuePresence(tx.db, timing)) {
            const user = { userId: ended.user_id, username: ended.username };
            await leaveCallIn(this.ctx, tx, ended.room_id, user);
            await tx.emit(
              "USER_LEFT_ROOM",
              eventData.roomMembership({
                roomId: ended.room_id,
                username: ended.username,
                via: "presence",
              }),
            );
          }
        });
        await forgetDeadInstances(this.ctx.db, timing.now - 20 * this.expiryMs);
        const next = await nextLeaveAt(this.ctx.db);
        // Another process's grace is seen here too; its own timer usually wins, this is the backstop.
        if (next !== undefined) this.scheduleSweep(Math.max(20, next - this.ctx.now() + 5));
      } catch (error) {
        if (!this.stopped)
          this.options.log.warn({ err: (error as Error).message }, "presence sweep failed");
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  /**
   * Graceful stop: waits for queued writes, then forgets this process; the presences it held begin
   * their grace (and end at the sweep of whichever process runs next).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.sweepTimer);
    await Promise.all([...this.holders.values()].map((holder) => holder.chain));
    await this.sweeping;
    try {
      await removeInstance(this.ctx.db, this.ctx.instanceId);
      await reconcilePresence(this.ctx.db, this.timing());
    } catch (error) {
      this.options.log.warn(
        { err: (error as Error).message },
        "could not clear presence at shutdown",
      );
    }
  }
}
