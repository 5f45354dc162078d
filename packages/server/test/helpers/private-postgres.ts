/**
 * A PostgreSQL server of the test's own, for tests that restart or stop the database: initdb into
 * a temp dir, started with pg_ctl on a free loopback port with its socket in that dir, so the
 * machine's PostgreSQL (and every other test) is left alone. initdb refuses to run as root: as
 * root, the commands run as the `postgres` user, which then owns the temp dir.
 *
 *   const pg = await startPrivatePostgres();   // throws if the binaries are missing
 *   pg.url                                     // postgres://postgres@127.0.0.1:PORT/postgres
 *   await pg.restart();                        // pg_ctl restart -m fast
 *   await pg.stop();                           // and removes the data dir
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { findPgBin } from "./services.js";

const run = promisify(execFile);

export interface PrivatePostgres {
  readonly url: string;
  readonly port: number;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = findPgBin();
  if (!bin) throw new Error("initdb and pg_ctl not found (set PG_BIN)");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-pg-"));
  const data = path.join(dir, "data");
  const log = path.join(dir, "server.log");
  if (asRoot) await run("chown", ["-R", "postgres:postgres", dir]);

  const pg = (tool: string, args: string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", path.join(bin, tool), ...args], { cwd: dir })
      : run(path.join(bin, tool), args, { cwd: dir });

  await pg("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  // fsync off: this instance holds throwaway test data and must start fast.
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c full_page_writes=off`;
  const pgCtl = (args: string[]) =>
    pg("pg_ctl", ["-D", data, "-l", log, "-w", "-t", "30", ...args]);
  try {
    await pgCtl(["-o", serverOptions, "start"]);
  } catch (error) {
    const printed = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`private PostgreSQL did not start: ${(error as Error).message}\n${printed}`);
  }

  let stopped = false;
  const cleanup = () => {
    if (stopped) return;
    // Last resort at exit (a test that failed before stop()): synchronous and best effort.
    try {
      const pid = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      if (pid > 0) process.kill(pid, "SIGQUIT");
    } catch {
      // already gone
    }
  };
  process.once("exit", cleanup);

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart() {
      // pg_ctl restart reuses the options the server was started with (postmaster.opts).
      await pgCtl(["-m", "fast", "restart"]);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener("exit", cleanup);
      await pgCtl(["-m", "immediate", "stop"]).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
