import type { FastifyInstance } from "fastify";
import { createAppContext, type AppContext } from "./app-context.js";
import { buildApp } from "./app.js";
import { startBackgroundWork, type BackgroundWork } from "./background-work.js";
import { createFirstAdmin, firstAdminToken, type FirstAdmin } from "./bootstrap-admin.js";
import type { Config } from "./config/load-config.js";
import { weakenedGuards } from "./config/weakened-guards.js";
import { databaseInBrief } from "./db/dialect.js";

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly ctx: AppContext;
  /** The address it listens on, e.g. http://127.0.0.1:8080. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * The process: context (database, keys), the HTTP app, background work, and graceful close
 * (stop accepting, finish in-flight requests and deliveries, close the database).
 */
export async function startServer(
  config: Config,
  print: (line: string) => void = console.log,
): Promise<RunningServer> {
  let admin: FirstAdmin | undefined;
  const ctx = await createAppContext(config, {
    // Under the start lock: of processes starting together on an empty database, one creates the
    // admin and prints its token; the others wait, then find it.
    atStart: async (db) => {
      admin = await createFirstAdmin(db, Date.now());
    },
    onStartWait: () =>
      process.stderr.write(
        "parley: another process is starting on this database (migrations, first admin); waiting for it\n",
      ),
  });
  const adminToken = admin ? await firstAdminToken(ctx, admin) : undefined;
  const app = await buildApp(ctx);
  for (const warning of weakenedGuards(config)) app.log.warn(warning);
  // Before listening: the first socket accepted already follows the bus, with presence running.
  const background: BackgroundWork[] = await startBackgroundWork(ctx, app, app.log);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      await Promise.all(background.map((work) => work.stop()));
      await ctx.tracing?.shutdown();
      await ctx.database.close();
    })());
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await close();
    throw error;
  }
  const bound = app.server.address();
  const port = typeof bound === "object" && bound ? bound.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const address = `http://${host}:${port}`;

  // One write for the whole banner, so that a reader of the output (a person, a supervisor, a
  // script waiting for the admin token) never sees the address without the lines that follow it.
  // It is the last thing a start prints (the log writes synchronously, and requests log at
  // debug), so the token does not scroll away.
  const banner = [
    `Parley is listening on ${address} (${databaseInBrief(ctx.dialect, config.dataDir)}, ${config.edition} edition)`,
    `Admin UI: ${address}/admin/`,
    `API docs: ${address}/docs`,
  ];
  if (admin && adminToken) {
    banner.push(
      `Created the first admin user "${admin.username}". Its token (valid 30 days):`,
      `Admin token: ${adminToken}`,
    );
  }
  print(banner.join("\n"));
  return { app, ctx, address, close };
}
