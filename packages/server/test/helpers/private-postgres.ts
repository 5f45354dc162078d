/**
 * A PostgreSQL server of the test's own, for tests that restart or stop the database: initdb into
 * a temp dir, started with pg_ctl on a free loopback port with its socket in that dir, so the
 * machine's PostgreSQL (and every other test) is left alone. initdb refuses to run as root: as
 * root, the commands run as the `postgres` user, which then owns the temp dir.
 *
 *   const pg = await startPrivatePostgres();   // throws if the binaries are missing
 *   pg.url                                     // postgres://postgres@127.0.0.1:PORT/postgres
 *   await pg.restart();                        // pg_ctl restart -m fast
 *   pg.freeze(); pg.thaw();                    // SIGSTOP / SIGCONT every process of the server
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
  /**
   * Stops every process of the server (SIGSTOP): the postmaster and its backends. Connections stay
   * open and new ones are accepted by the kernel, but nothing answers: a hung host or disk.
   */
  freeze(): void;
  /** Lets a frozen server go on (SIGCONT). stop() thaws a frozen server first. */
  thaw(): void;
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

/** `root` and its descendants, parents first (from /proc: Linux). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid ...: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
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
  const postmasterPid = () =>
    Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  let frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone
      }
    }
    frozen = [];
  };
  const cleanup = () => {
    thaw();
    if (stopped) return;
    // Last resort at exit (a test that failed before stop()): synchronous and best effort.
    try {
      const pid = postmasterPid();
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
    freeze() {
      // The postmaster first, so that it forks no backend after its children are listed.
      const postmaster = postmasterPid();
      process.kill(postmaster, "SIGSTOP");
      frozen.push(postmaster);
      for (const pid of processTree(postmaster).slice(1)) {
        process.kill(pid, "SIGSTOP");
        frozen.push(pid);
      }
    },
    thaw,
    async stop() {
      thaw();
      if (stopped) return;
      stopped = true;
      process.removeListener("exit", cleanup);
      await pgCtl(["-m", "immediate", "stop"]).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
