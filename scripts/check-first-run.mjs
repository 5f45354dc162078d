#!/usr/bin/env node
/**
 * Runs the README's quick start literally, in a temporary clone of this repository, and checks
 * that each step does what the README says. The shell blocks of the "Quick start" section are taken
 * from the README itself, in order:
 * - a block that starts a long-running command (`npm start`, `parley webhooks listen`) is started
 *   in the background, as in a terminal of its own; starting the server again first stops the
 *   running one (the README's Ctrl-C);
 * - every other block runs in bash, with the admin token the first start printed put where the
 *   README has `TOKEN=eyJhbGciOi...`;
 * - the tests block (`npm ci && npm test`) is skipped: `.ci/run` runs the tests;
 * - in a block `npm ci && <command>`, `npm ci` runs first on its own: its output must not hold an
 *   EBADENGINE warning (a dependency that does not support the Node.js the README asks for), and
 *   `npx parley --help` must then print the usage before `npm start` (or any build of ours) runs,
 *   as the README says `npx parley ...` works from the moment `npm ci` finishes.
 * It then checks: the first start prints the lines the README shows and an admin token; the
 * message read back has every representation; the receiver prints the MESSAGE_CREATED delivery.
 *
 * When 8080 or 9000 is taken on this machine, free ports are used instead: PARLEY_PORT is set and
 * the commands' addresses are rewritten to match. Needs git and network access for `npm ci` (about
 * three minutes on two cores). Usage: node scripts/check-first-run.mjs [--keep]
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const keep = process.argv.includes("--keep");
const started = Date.now();
const log = (line) =>
  process.stdout.write(`[${Math.round((Date.now() - started) / 1000)}s] ${line}\n`);

/** 8080/9000 when free, else a port the system picks. */
async function portOr(preferred) {
  const free = (port) =>
    new Promise((resolve) => {
      const server = net.createServer();
      server.once("error", () => resolve(undefined));
      server.listen(port, "127.0.0.1", () => {
        const { port: got } = server.address();
        server.close(() => resolve(got));
      });
    });
  return (await free(preferred)) ?? (await free(0));
}

/** The ```sh blocks of the README's "Quick start" section, and its expected-output block. */
function quickStartBlocks(readme) {
  const section = readme.split(/^## /m).find((part) => part.startsWith("Quick start"));
  if (!section) throw new Error('README.md has no "## Quick start" section');
  const blocks = [];
  for (const match of section.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```/gm)) {
    const indent = match[1];
    const text = match[3]
      .split("\n")
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join("\n");
    blocks.push({ lang: match[2], text });
  }
  return blocks;
}

const background = [];

/** Starts a command as in a terminal of its own; collects its output. */
function startBackground(name, command, cwd, env) {
  log(`start (background): ${command}`);
  const child = spawn("bash", ["-c", command], { cwd, env, detached: true });
  const proc = { name, child, output: "", exited: false };
  child.stdout.on("data", (chunk) => (proc.output += chunk));
  child.stderr.on("data", (chunk) => (proc.output += chunk));
  child.on("exit", () => (proc.exited = true));
  background.push(proc);
  return proc;
}

async function waitFor(proc, pattern, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = pattern.exec(proc.output);
    if (found) return found;
    if (proc.exited) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what}: not seen in ${proc.name}'s output:\n${proc.output.slice(-4000)}`);
}

/** Ctrl-C: SIGINT to the process group, then wait for it to end. */
async function stop(proc) {
  if (proc.exited) return;
  log(`stop: ${proc.name}`);
  try {
    process.kill(-proc.child.pid, "SIGINT");
  } catch {
    return;
  }
  for (let i = 0; i < 120 && !proc.exited; i++) await new Promise((r) => setTimeout(r, 250));
  if (!proc.exited) process.kill(-proc.child.pid, "SIGKILL");
}

function check(condition, message) {
  if (!condition) throw new Error(message);
  log(`ok: ${message}`);
}

/** Runs a command in the foreground, in bash; gives its exit status and output (both streams). */
function runForeground(command, cwd, env, timeoutMs) {
  log(`run: ${command}`);
  const run = spawnSync("bash", ["-c", `${command} 2>&1`], {
    cwd,
    env,
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: run.status, output: run.stdout ?? "" };
}

/** `npm ci` alone, then `npx parley --help` before any build or start. */
function installThenCheckCli(install, cwd, env) {
  const installed = runForeground(install, cwd, env, 15 * 60_000);
  process.stdout.write(`${installed.output.trim().split("\n").slice(-5).join("\n")}\n`);
  check(installed.status === 0, `\`${install}\` succeeds (exit status ${installed.status})`);
  const engines = installed.output.split("\n").filter((line) => /EBADENGINE/.test(line));
  check(
    engines.length === 0,
    `\`${install}\` warns of no unsupported engine (EBADENGINE)${engines.length ? `:\n${engines.join("\n")}` : ""}`,
  );
  const help = runForeground("npx parley --help", cwd, env, 60_000);
  check(
    help.status === 0 && /^Usage: parley /m.test(help.output),
    `\`npx parley --help\` prints the usage right after \`${install}\`${help.status === 0 ? "" : ` (exit status ${help.status}):\n${help.output}`}`,
  );
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "parley-first-run-"));
const clone = path.join(work, "parley");
let failed = false;
try {
  const branch = execFileSync("git", ["rev-parse", "--abbrev-ref", "HEAD"], { cwd: repo })
    .toString()
    .trim();
  log(`git clone ${repo} (${branch}) into ${clone}`);
  execFileSync(
    "git",
    ["clone", "--quiet", ...(branch === "HEAD" ? [] : ["--branch", branch]), repo, clone],
    { stdio: "inherit" },
  );
  const readme = fs.readFileSync(path.join(clone, "README.md"), "utf8");
  const blocks = quickStartBlocks(readme);
  const apiPort = await portOr(8080);
  const hookPort = await portOr(9000);
  log(`API port ${apiPort}, receiver port ${hookPort}`);
  const rewrite = (text) =>
    text
      .replaceAll("127.0.0.1:8080", `127.0.0.1:${apiPort}`)
      .replaceAll("127.0.0.1:9000", `127.0.0.1:${hookPort}`)
      .replaceAll("--port 9000", `--port ${hookPort}`);
  const env = {
    ...process.env,
    ...(apiPort === 8080 ? {} : { PARLEY_PORT: String(apiPort) }),
  };
  // The clone is a stranger's checkout: no settings of ours leak in.
  for (const name of Object.keys(env)) {
    if (name.startsWith("PARLEY_") && name !== "PARLEY_PORT") delete env[name];
  }
  delete env.DATABASE_URL;
  delete env.REDIS_URL;

  let server;
  let receiver;
  let token;
  const expected = blocks.find((block) => block.lang === "" && block.text.includes("Admin token:"));
  check(expected !== undefined, "the README shows what the first start prints");

  let installed = false;
  for (const block of blocks.filter((b) => b.lang === "sh")) {
    let text = rewrite(block.text.trim());
    if (/\bnpm test\b/.test(text)) {
      log(`skip (the tests run in .ci/run): ${text}`);
      continue;
    }
    const install = /^(npm ci\b[^&\n]*?)\s*&&\s*/.exec(text);
    if (install) {
      installThenCheckCli(install[1], clone, env);
      installed = true;
      text = text.slice(install[0].length);
    }
    if (/\bnpm start\b/.test(text)) {
      const first = server === undefined;
      if (server) await stop(server);
      server = startBackground("the server", text, clone, env);
      const listening = await waitFor(
        server,
        /Parley is listening on (http:\/\/\S+)/,
        first ? 15 * 60_000 : 5 * 60_000,
        "the server's start line",
      );
      check(
        listening[1] === `http://127.0.0.1:${apiPort}`,
        `the server listens on ${listening[1]}`,
      );
      if (first) {
        const printed = await waitFor(server, /Admin token: (\S+)/, 30_000, "the admin token");
        token = printed[1];
        for (const line of expected.text.split("\n").filter(Boolean)) {
          const shape = line
            .replace(/eyJ\S+/, "")
            .replace(/\/path\/to\/parley/, "")
            .replace("127.0.0.1:8080", `127.0.0.1:${apiPort}`)
            .split(/\s+/)
            .filter((word) => word.length > 0)
            .slice(0, 4)
            .join(" ");
          check(
            server.output.replace(/\s+/g, " ").includes(shape),
            `the first start prints "${shape}…" as the README shows`,
          );
        }
        check(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/.test(token), "the admin token is a JWT");
      }
      continue;
    }
    if (/parley webhooks listen/.test(text)) {
      receiver = startBackground("the receiver", text, clone, env);
      await waitFor(
        receiver,
        /Listening for Parley webhooks on /,
        120_000,
        "the receiver's banner",
      );
      continue;
    }
    check(token !== undefined, "a token was printed before the API calls");
    const script = text.replace(/^TOKEN=\S+/m, `TOKEN='${token}'`);
    const withToken = /^TOKEN=/m.test(text) ? script : `TOKEN='${token}'\n${script}`;
    log(`run: ${text.split("\n")[0]}${text.includes("\n") ? " …" : ""}`);
    const output = execFileSync("bash", ["-euo", "pipefail", "-c", withToken], {
      cwd: clone,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    process.stdout.write(`${output.trim()}\n`);
    if (text.includes("full+json")) {
      check(
        /"contentHtml":"<p>Hello <strong>Parley<\/strong><\/p>/.test(output),
        "the message reads back in every representation",
      );
    }
    if (text.includes("/api/admin/webhooks")) {
      check(receiver !== undefined, "the receiver runs before the webhook is registered");
      await waitFor(
        receiver,
        /✓ MESSAGE_CREATED\s+webhook \d+/,
        30_000,
        "the MESSAGE_CREATED delivery",
      );
      check(true, "the receiver printed the MESSAGE_CREATED delivery");
    }
  }
  check(installed, "the walk-through installed with `npm ci` and checked `npx parley --help`");
  check(
    receiver !== undefined && /✓ MESSAGE_CREATED/.test(receiver.output),
    "the walk-through ended with a verified delivery",
  );
  log("the README's quick start works, step by step, from a fresh clone");
} catch (error) {
  failed = true;
  process.stderr.write(`\nFAILED: ${error.message}\n`);
  for (const proc of background) {
    process.stderr.write(
      `\n--- ${proc.name} output (last 3000 characters) ---\n${proc.output.slice(-3000)}\n`,
    );
  }
} finally {
  for (const proc of background) await stop(proc);
  if (keep || failed) log(`the clone is kept in ${clone}`);
  else fs.rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
