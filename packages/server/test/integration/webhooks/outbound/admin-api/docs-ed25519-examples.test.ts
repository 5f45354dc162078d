// The ed25519 receivers of docs/webhooks.md ("Ed25519 signatures"), run as written against real
// deliveries: the Node one (@parley/client) and the Python one (the cryptography library).
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const serverDir = path.resolve(here, "../../../../..");
const docs = fs.readFileSync(path.resolve(serverDir, "../../docs/webhooks.md"), "utf8");

function example(name: string): string {
  const match = new RegExp(`<!-- example: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(
    docs,
  );
  if (!match) throw new Error(`docs/webhooks.md has no example ${name}`);
  return match[1]!;
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForPort(port: number): Promise<void> {
  await waitFor(
    `port ${port}`,
    () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect(port, "127.0.0.1");
        socket.once("connect", () => (socket.destroy(), resolve(true)));
        socket.once("error", () => resolve(false));
      }),
  );
}

describeEachDialect("the docs' ed25519 receivers on $name", (dialect) => {
  let d: OperatingApp;
  const children: ChildProcess[] = [];
  const files: string[] = [];
  beforeAll(async () => {
    d = await startOperatingApp(dialect);
  });
  afterAll(async () => {
    for (const child of children) child.kill();
    for (const file of files) fs.rmSync(file, { force: true });
    await d?.close();
  });

  for (const [name, command, extension] of [
    ["ed25519-node", process.execPath, "mjs"],
    ["ed25519-python", "python3", "py"],
  ] as const) {
    it(`${name} verifies real v1a deliveries with the old key during a rotation, and refuses one signed by another key`, async () => {
      // Next to the server package, so the Node example resolves @parley/client.
      const file = path.join(serverDir, `.docs-example-${process.pid}-${name}.${extension}`);
      fs.writeFileSync(file, example(name));
      files.push(file);
      const port = await freePort();
      const endpoint = await d.create({
        url: `http://127.0.0.1:${port}/hook`,
        signatureScheme: "standard-webhooks-ed25519",
      });
      const oldKey = endpoint.publicKey!;
      // The receiver knows only the old key: the overlap's second entry must verify.
      const rotated = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, {});
      expect(rotated.json().publicKey).not.toBe(oldKey);

      let output = "";
      const child = spawn(command, [file], {
        env: { ...process.env, PORT: String(port), PARLEY_WEBHOOK_PUBLIC_KEY: oldKey },
        stdio: ["ignore", "pipe", "inherit"],
      });
      children.push(child);
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await waitForPort(port);

      await d.emitUser(`docs-${name}`);
      await waitFor("the receiver's line", () => /ADMIN_USER_DISABLED/.test(output));
      const [line] = output.trim().split("\n");
      expect(line).toMatch(/^evt_[0-9A-Z]{26} ADMIN_USER_DISABLED$/);
      const [delivery] = (
        await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`)
      ).json().items as Array<{ id: number }>;
      await waitFor("SUCCESS", async () => {
        const res = await d.api(
          "GET",
          `/api/admin/webhooks/${endpoint.id}/deliveries/${delivery!.id}`,
        );
        return res.json().status === "SUCCESS";
      });

      // Signed by a key pair the receiver does not know: 401.
      const { privateKey } = crypto.generateKeyPairSync("ed25519");
      const id = "evt_forged";
      const seconds = Math.floor(Date.now() / 1000);
      const body = '{"event":"ADMIN_USER_DISABLED"}';
      const forged = await fetch(`http://127.0.0.1:${port}/hook`, {
        method: "POST",
        headers: {
          "webhook-id": id,
          "webhook-timestamp": String(seconds),
          "webhook-signature": `v1a,${crypto.sign(null, Buffer.from(`${id}.${seconds}.${body}`), privateKey).toString("base64")}`,
          "content-type": "application/json",
        },
        body,
      });
      expect(forged.status).toBe(401);
    });
  }
});
