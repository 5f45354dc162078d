import type { AppContext } from "../app-context.js";
import { createLocalBus } from "./local-bus.js";
import { createPostgresBus, type PostgresBusOptions } from "./postgres-bus.js";
import type { RealtimeBus } from "./realtime-bus.js";

/**
 * This process's realtime bus: NOTIFY and a LISTEN connection when the database is a server that
 * other processes share (it has connection settings for one), the spine's own after-commit
 * listeners when the database is this process's alone.
 */
export function createRealtimeBus(ctx: AppContext, log: PostgresBusOptions["log"]): RealtimeBus {
  const pgConfig = ctx.database.pgConfig;
  return pgConfig
    ? createPostgresBus({ db: ctx.db, spine: ctx.spine, pgConfig, log })
    : createLocalBus(ctx.spine);
}
