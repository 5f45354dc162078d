import type { FastifyInstance } from "fastify";
import { createAppContext, type AppContext } from "./app-context.js";
import { buildApp } from "./app.js";
import { startBackgroundWork, type BackgroundWork } from "./background-work.js";
import { bootstrapAdmin } from "./bootstrap-admin.js";
import type { Config } from "./config/load-config.js";
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
  const ctx = await createAppContext(config);
  const app = await buildApp(ctx);
  const admin = await bootstrapAdmin(ctx);
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
  const banner = [
    `Parley is listening on ${address} (${databaseInBrief(ctx.dialect, config.dataDir)}, ${config.edition} edition)`,
    `Admin UI: ${address}/admin/`,
    `API docs: ${address}/docs`,
  ];
  if (admin) {
    banner.push(
      `Created the first admin user "${admin.username}". Its token (valid 30 days):`,
      `Admin token: ${admin.token}`,
    );
  }
  print(banner.join("\n"));
  return { app, ctx, address, close };
}
