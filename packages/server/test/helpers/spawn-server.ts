/**
 * Runs `parley serve` as a child process (the built CLI, packages/server/dist/cli.js), the way an
 * operator does, for tests that need a real process: crash it, run two of them, restart its
 * database.
 *
 *   const server = await spawnServer({ env: { PARLEY_DATA_DIR: dir } });
 *   server.url, server.adminToken    // from the lines it prints at start
 *   await server.kill("SIGKILL");
 *
 * Every child is registered and killed when the test process exits, and `killAllServers()` (call it
 * in afterEach) kills those still running, so a failing test never leaves one behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { CLI } from "./run-cli.js";

export interface SpawnedServer {
  /** e.g. http://127.0.0.1:40211 */
  readonly url: string;
  /** Printed only by the process that created the first admin user. */
  readonly adminToken: string | undefined;
  readonly pid: number;
  /** Everything it printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** Sends the signal (default SIGTERM) and waits for the process to exit; gives its exit code. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface SpawnOptions {
  /** Settings for the child on top of the test defaults (data dir, database, knobs). */
  env: Record<string, string>;
  /** Give up waiting for the "listening" line after this long. Default 20 s. */
  startTimeoutMs?: number;
  /** Another build's dist/cli.js (a benchmark comparing two builds). Default: this package's. */
  cli?: string;
  /** Options for node itself, before the script (e.g. --cpu-prof). */
  nodeArgs?: string[];
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Kills every child still running (use in afterEach / afterAll). */
export async function killAllServers(): Promise<void> {
  await Promise.all([...running].map((child) => stop(child, "SIGKILL")));
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.kill(signal);
  });
}

/** Settings of the parent that must not leak into a child (its database, its knobs). */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith("PARLEY_") || name === "DATABASE_URL") continue;
    env[name] = value;
  }
  return {
    ...env,
    PARLEY_PORT: "0",
    PARLEY_HOST: "127.0.0.1",
    PARLEY_LOG_LEVEL: "warn",
    PARLEY_WEBHOOK_ALLOW_HTTP: "true",
    PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  };
}

export async function spawnServer(options: SpawnOptions): Promise<SpawnedServer> {
  const cli = options.cli ?? CLI;
  if (!fs.existsSync(cli)) {
    throw new Error(`${cli} is missing: build the server first (npx tsc -b packages/server)`);
  }
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), cli, "serve"], {
    env: {
      ...baseEnv(),
      // PostgreSQL needs a master key to wrap the generated keys it stores; the same for every
      // child, so processes sharing a database read the same keys. A fixed test value.
      ...(options.env.DATABASE_URL ? { PARLEY_MASTER_KEY: "7e57".repeat(16) } : {}),
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));

  let output = "";
  let url: string | undefined;
  let adminToken: string | undefined;
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`parley serve did not start in time; it printed:\n${output}`)),
      options.startTimeoutMs ?? 20_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      url ??= /listening on (http:\/\/\S+)/.exec(output)?.[1];
      adminToken ??= /^Admin token: (\S+)$/m.exec(output)?.[1];
      // The whole banner (address, docs line and, on first start, the token) is one write.
      if (url && /^API docs: /m.test(output)) {
        clearTimeout(timer);
        setTimeout(resolve, 50);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `parley serve exited (${signal ?? code}) before listening; it printed:\n${output}`,
        ),
      );
    });
  });
  try {
    await started;
  } catch (error) {
    await stop(child, "SIGKILL");
    throw error;
  }

  return {
    url: url!,
    adminToken,
    pid: child.pid!,
    output: () => output,
    kill: (signal = "SIGTERM") => stop(child, signal),
  };
}
