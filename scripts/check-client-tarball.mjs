#!/usr/bin/env node
/**
 * Checks that @parley/client works for a project outside this repository, installed the way
 * the client README says: from the tarballs `npm pack` makes of @parley/endpoint and
 * @parley/client. In a temporary folder it packs both (they must be built: `npm run build`),
 * makes a small TypeScript project and installs the tarballs there with `npm install --offline`.
 * Their registry dependencies (@sinclair/typebox) and @types/node (with undici-types) are packed
 * from this repository's node_modules too, so nothing is fetched: the check runs without network
 * and without depending on what npm's cache holds. Then it type-checks (with this repository's
 * TypeScript) and runs an example:
 * - `node-example.ts`: the main entry (request, paginate, webhook receiving) with @types/node,
 * - `browser-example.ts`: `@parley/client/browser` with the DOM library and no Node types.
 * Exits non-zero, with the failing step's output, if any step fails.
 *
 * Usage: node scripts/check-client-tarball.mjs [--keep]
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const keep = process.argv.includes("--keep");
const tsc = path.join(repo, "node_modules/typescript/bin/tsc");
/** Installed in this repository, packed from node_modules for the offline install. */
const REGISTRY_PACKAGES = ["@sinclair/typebox", "@types/node", "undici-types"];

const work = fs.mkdtempSync(path.join(os.tmpdir(), "parley-client-tarball-"));
const project = path.join(work, "project");
fs.mkdirSync(project);

function run(what, command, args, cwd) {
  process.stdout.write(`==> ${what}\n`);
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false" },
    });
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ""}${error.stderr ?? ""}\n${what} failed\n`);
    process.stderr.write(`(the project is kept in ${work})\n`);
    process.exit(1);
  }
}

try {
  for (const name of ["endpoint", "client"]) {
    if (!fs.existsSync(path.join(repo, "packages", name, "dist/index.js"))) {
      process.stderr.write(`packages/${name} is not built: run \`npm run build\` first\n`);
      process.exit(1);
    }
  }
  const packed = JSON.parse(
    run(
      "npm pack @parley/endpoint and @parley/client",
      "npm",
      [
        "pack",
        "--json",
        "--pack-destination",
        work,
        "-w",
        "packages/endpoint",
        "-w",
        "packages/client",
      ],
      repo,
    ),
  ).map((entry) => path.join(work, entry.filename));

  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "uses-parley-client", private: true, type: "module" }, null, 2),
  );
  const compilerOptions = {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  };
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: { ...compilerOptions, lib: ["ES2022"], types: ["node"] },
        files: ["node-example.ts"],
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(project, "tsconfig.browser.json"),
    JSON.stringify(
      {
        compilerOptions: { ...compilerOptions, lib: ["ES2022", "DOM"], types: [] },
        files: ["browser-example.ts"],
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(project, "node-example.ts"),
    `import http from "node:http";
import {
  RequestError,
  createWebhookHandler,
  paginate,
  request,
  signWebhookPayload,
  verifyParleySignature,
  verifyWebhookSignature,
  type Message,
  type Webhook,
} from "@parley/client";
import { ModerationFlagSchema } from "@parley/client/wire";

const parley = request.defaults({
  baseUrl: "http://127.0.0.1:1",
  headers: { authorization: "Bearer token" },
});

export async function post(roomId: number): Promise<Message> {
  const { data } = await parley("POST /api/rooms/{roomId}/messages", { roomId, content: "hi" });
  return data;
}

export async function webhooks(): Promise<Webhook[]> {
  return paginate.all(parley, "GET /api/admin/webhooks", { limit: 200 });
}

export const server = http.createServer(
  createWebhookHandler({
    secret: "a-long-shared-secret",
    async onEvent(event) {
      if (event.event === "MESSAGE_CREATED") console.log(event.data.messageId);
    },
  }),
);

const body = '{"event":"WEBHOOK_TEST"}';
const header = signWebhookPayload("a-long-shared-secret", body);
if (!verifyParleySignature("a-long-shared-secret", body, header)) throw new Error("verify");
// The 1.0 name, kept as a deprecated alias.
if (verifyWebhookSignature !== verifyParleySignature) throw new Error("alias");
if (typeof ModerationFlagSchema.properties.messageText !== "object") throw new Error("wire");
try {
  await post(1);
  throw new Error("expected a failure: nothing listens on port 1");
} catch (error) {
  if (error instanceof RequestError) throw error;
}
console.log("node example ran");
`,
  );
  fs.writeFileSync(
    path.join(project, "browser-example.ts"),
    `import { EVENT_NAMES, paginate, request, type DeliverySummary } from "@parley/client/browser";

const parley = request.defaults({ baseUrl: location.origin });

export async function failed(id: number): Promise<DeliverySummary[]> {
  return paginate.all(parley, "GET /api/admin/webhooks/{id}/deliveries", { id, status: "FAILED" });
}

export const events: readonly string[] = EVENT_NAMES;
`,
  );

  const registry = REGISTRY_PACKAGES.map((name) => {
    const [entry] = JSON.parse(
      run(
        `npm pack ${name} from node_modules`,
        "npm",
        ["pack", "--json", "--pack-destination", work, path.join(repo, "node_modules", name)],
        work,
      ),
    );
    return path.join(work, entry.filename);
  });
  run(
    "npm install --offline the tarballs",
    "npm",
    ["install", "--offline", "--no-audit", "--no-fund", ...packed, ...registry],
    project,
  );
  run(
    "type-check the Node example (tsc, strict, NodeNext)",
    process.execPath,
    [tsc, "-p", "tsconfig.json"],
    project,
  );
  run(
    "type-check the browser example (DOM, no Node types)",
    process.execPath,
    [tsc, "-p", "tsconfig.browser.json"],
    project,
  );
  run(
    "compile and run the Node example",
    process.execPath,
    [tsc, "-p", "tsconfig.json", "--noEmit", "false", "--outDir", "out"],
    project,
  );
  const output = run(
    "node out/node-example.js",
    process.execPath,
    ["out/node-example.js"],
    project,
  );
  if (!output.includes("node example ran")) {
    process.stderr.write(output);
    process.exit(1);
  }
  process.stdout.write(
    "@parley/client installs from its tarball and type-checks in a separate project\n",
  );
} finally {
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
  else process.stdout.write(`kept ${work}\n`);
}
