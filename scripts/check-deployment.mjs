#!/usr/bin/env node
// Checks the deployment files in deploy/ with the tools that run them (docs/deployment.md):
//
//   systemd   systemd-analyze verify deploy/parley.service and the backup service and timer (paths
//             pointed at this checkout)
//   nginx     nginx -t on deploy/nginx/parley.conf with a self-signed certificate made here; then
//             nginx runs it in front of a real `parley serve` (built: npm run build) and the check
//             goes through it over TLS: /healthz, the WebSocket upgrade of /api/stream, the
//             redirect from http, /metrics kept inside
//   prometheus  promtool check rules, test rules (parley-alerts.test.yml) and check config
//   caddy     caddy validate deploy/caddy/Caddyfile, where Caddy is installed (CI does not install it)
//
//   node scripts/check-deployment.mjs            # every check; a missing tool is skipped
//   CI=true node scripts/check-deployment.mjs    # a missing tool (but Caddy) fails the run
//
// .ci/run installs nginx, prometheus (promtool) and systemd when missing, then runs this.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const deploy = path.join(root, "deploy");
const inCi = /^(1|true|yes)$/i.test(process.env.CI ?? "");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "parley-deploy-check-"));
const children = [];
let failures = 0;

function has(tool) {
  return spawnSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }).status === 0;
}

async function check(name, tools, body, { optional = false } = {}) {
  const missing = tools.filter((tool) => !has(tool));
  if (missing.length > 0) {
    const required = inCi && !optional;
    console.log(`${required ? "FAIL" : "skip"} ${name}: ${missing.join(", ")} not installed`);
    if (required) failures++;
    return;
  }
  const started = Date.now();
  try {
    const detail = await body();
    console.log(`ok   ${name}${detail ? `: ${detail}` : ""} (${Date.now() - started} ms)`);
  } catch (error) {
    failures++;
    console.log(`FAIL ${name}: ${error instanceof Error ? error.message : error}`);
  }
}

/** Runs a command; throws with its output when it fails or, with `quiet`, prints anything. */
function run(command, args, { quiet = false } = {}) {
  const result = spawnSync(command, args, { encoding: "utf8" });
  const output = `${result.stdout}${result.stderr}`.trim();
  if (result.status !== 0 || (quiet && output !== ""))
    throw new Error(`${command} ${args.join(" ")} said:\n${output}`);
  return output;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** `parley serve` from this checkout's build, on a port of its own; resolves with its port. */
async function startParley() {
  const cli = path.join(root, "packages/server/dist/cli.js");
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: npm run build first`);
  const child = spawn(process.execPath, [cli, "serve"], {
    env: {
      PATH: process.env.PATH,
      PARLEY_DATA_DIR: path.join(work, "data"),
      PARLEY_PORT: "0",
      PARLEY_LOG_LEVEL: "warn",
      PARLEY_PUBLIC_BASE_URL: "https://chat.example.com",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`parley did not start:\n${output}`)), 60_000);
    const onData = (chunk) => {
      output += chunk;
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match && /^API docs: /m.test(output)) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`parley exited (${code}):\n${output}`)));
  });
}

/** A request over TLS to 127.0.0.1:port for chat.example.com, trusting only `ca`. */
function tlsRequest(port, ca, options) {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: "127.0.0.1",
      port,
      servername: "chat.example.com",
      ca,
      headers: { host: "chat.example.com", ...options.headers },
      path: options.path,
      method: "GET",
      timeout: 10_000,
    });
    req.once("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode, headers: res.headers });
    });
    req.once("response", (res) => {
      res.resume();
      res.once("end", () => resolve({ status: res.statusCode, headers: res.headers }));
    });
    req.once("timeout", () => req.destroy(new Error(`${options.path}: no answer`)));
    req.once("error", reject);
    req.end();
  });
}

function plainRequest(port, pathName) {
  return new Promise((resolve, reject) => {
    http
      .get(
        { host: "127.0.0.1", port, path: pathName, headers: { host: "chat.example.com" } },
        (res) => {
          res.resume();
          resolve({ status: res.statusCode, headers: res.headers });
        },
      )
      .once("error", reject);
  });
}

function waitForPort(port, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve();
      });
      socket.once("error", () => {
        if (Date.now() > deadline) reject(new Error(`nothing listens on ${port}`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

try {
  await check("systemd unit (systemd-analyze verify)", ["systemd-analyze"], () => {
    // ExecStart must exist to verify: point it at this checkout and this node.
    const units = ["parley.service", "parley-backup.service", "parley-backup.timer"];
    const dir = path.join(work, "systemd");
    fs.mkdirSync(dir);
    for (const name of units) {
      const unit = fs
        .readFileSync(path.join(deploy, name), "utf8")
        .replaceAll("/usr/bin/node", process.execPath)
        .replaceAll("/opt/parley", root);
      fs.writeFileSync(path.join(dir, name), unit);
    }
    run("systemd-analyze", ["verify", ...units.map((name) => path.join(dir, name))], {
      quiet: true,
    });
    return units.map((name) => `deploy/${name}`).join(", ");
  });

  await check(
    "nginx (nginx -t, then TLS and the WebSocket upgrade through it)",
    ["nginx", "openssl"],
    async () => {
      const dir = path.join(work, "nginx");
      fs.mkdirSync(dir);
      const cert = path.join(dir, "cert.pem");
      const key = path.join(dir, "key.pem");
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-days",
          "1",
          "-keyout",
          key,
          "-out",
          cert,
          "-subj",
          "/CN=chat.example.com",
          "-addext",
          "subjectAltName=DNS:chat.example.com",
        ],
        { stdio: "ignore" },
      );
      const site = fs
        .readFileSync(path.join(deploy, "nginx/parley.conf"), "utf8")
        .replace("/etc/letsencrypt/live/chat.example.com/fullchain.pem", cert)
        .replace("/etc/letsencrypt/live/chat.example.com/privkey.pem", key);
      // The site goes in the http block of a main config of the check's own (pid, logs, temp files
      // in its directory, so it runs beside any nginx of the machine).
      const main = (include) => `
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events {}
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  include ${include};
}
`;
      fs.writeFileSync(path.join(dir, "site.conf"), site);
      fs.writeFileSync(path.join(dir, "nginx.conf"), main(path.join(dir, "site.conf")));
      run("nginx", ["-t", "-q", "-c", path.join(dir, "nginx.conf")]);

      // Then for real, on ports of its own, in front of a running Parley.
      const [parleyPort, httpPort, httpsPort] = [
        await startParley(),
        await freePort(),
        await freePort(),
      ];
      const live = site
        .replace("server 127.0.0.1:8080;", `server 127.0.0.1:${parleyPort};`)
        .replace(/^\s*listen \[::\]:.*$/gm, "")
        .replace("listen 80;", `listen 127.0.0.1:${httpPort};`)
        .replace("listen 443 ssl;", `listen 127.0.0.1:${httpsPort} ssl;`);
      fs.writeFileSync(path.join(dir, "live.conf"), live);
      fs.writeFileSync(path.join(dir, "nginx-live.conf"), main(path.join(dir, "live.conf")));
      const nginx = spawn("nginx", ["-c", path.join(dir, "nginx-live.conf"), "-g", "daemon off;"], {
        stdio: "ignore",
      });
      children.push(nginx);
      await waitForPort(httpsPort);
      const ca = fs.readFileSync(cert);

      const health = await tlsRequest(httpsPort, ca, { path: "/healthz" });
      if (health.status !== 200)
        throw new Error(`GET /healthz through nginx answered ${health.status}`);
      const upgrade = await tlsRequest(httpsPort, ca, {
        path: "/api/stream",
        headers: {
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
          origin: "https://chat.example.com",
        },
      });
      if (upgrade.status !== 101)
        throw new Error(
          `the WebSocket upgrade of /api/stream through nginx answered ${upgrade.status}`,
        );
      const redirect = await plainRequest(httpPort, "/admin/");
      if (
        redirect.status !== 301 ||
        redirect.headers.location !== "https://chat.example.com/admin/"
      )
        throw new Error(`http:// answered ${redirect.status} ${redirect.headers.location ?? ""}`);
      const metrics = await tlsRequest(httpsPort, ca, { path: "/metrics" });
      if (metrics.status !== 404)
        throw new Error(`/metrics through nginx answered ${metrics.status}`);
      return "nginx -t; /healthz 200, /api/stream 101 Switching Protocols, http 301 to https, /metrics 404";
    },
  );

  await check("Prometheus rules and config (promtool)", ["promtool"], () => {
    const dir = path.join(deploy, "prometheus");
    run("promtool", ["check", "rules", path.join(dir, "parley-alerts.yml")]);
    run("promtool", ["test", "rules", path.join(dir, "parley-alerts.test.yml")]);
    run("promtool", ["check", "config", path.join(dir, "prometheus.yml")]);
    return "check rules, test rules, check config";
  });

  await check(
    "Caddyfile (caddy validate)",
    ["caddy"],
    () => {
      run("caddy", [
        "validate",
        "--adapter",
        "caddyfile",
        "--config",
        path.join(deploy, "caddy/Caddyfile"),
      ]);
      return "deploy/caddy/Caddyfile";
    },
    { optional: true },
  );
} finally {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  await Promise.all(
    children.map((child) =>
      child.exitCode === null ? new Promise((resolve) => child.once("exit", resolve)) : undefined,
    ),
  );
  fs.rmSync(work, { recursive: true, force: true });
}

if (failures > 0) {
  console.log(`${failures} deployment check(s) failed`);
  process.exit(1);
}
