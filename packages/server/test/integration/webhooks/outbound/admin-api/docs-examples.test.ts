// The Standard Webhooks receivers of docs/webhooks.md ("Verifying Standard Webhooks signatures"),
// run as written against real deliveries: the Node one and the Python one (stdlib only).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { signWebhookPayload } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import {} from "../delivery-engine/delivery-fixture.js";
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

describeEachDialect("the docs' Standard Webhooks receivers on $name", (dialect) => {
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
    ["standard-webhooks-node", process.execPath, "mjs"],
    ["standard-webhooks-python", "python3", "py"],
  ] as const) {
    it(`${name} verifies real deliveries, during a rotation too, and refuses a forged one and a replay without webhook-* headers`, async () => {
      // Next to the server package, so the Node example resolves @parley/client.
      const file = path.join(serverDir, `.docs-example-${process.pid}-${name}.${extension}`);
      fs.writeFileSync(file, example(name));
      files.push(file);
      const port = await freePort();
      const oldSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
      const endpoint = await d.create({
        url: `http://127.0.0.1:${port}/hook`,
        secret: oldSecret,
        signatureScheme: "standard-webhooks",
      });
      const rotated = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/rotate-secret`, {});
      const newSecret = rotated.json().secret as string;

      let output = "";
      const child = spawn(command, [file], {
        env: { ...process.env, PORT: String(port), PARLEY_WEBHOOK_SECRET: oldSecret },
        stdio: ["ignore", "pipe", "inherit"],
      });
      children.push(child);
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await waitForPort(port);

      // Still on the old secret: the overlap's second signature verifies.
      await d.emitUser(`docs-${name}`);
      await waitFor("the receiver's line", () => /ADMIN_USER_DISABLED/.test(output));
      const [line] = output.trim().split("\n");
      expect(line).toMatch(/^evt_[0-9A-Z]{26} ADMIN_USER_DISABLED$/);
      const [delivery] = (
        await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`)
      ).json().items as Array<{ eventId: string; id: number }>;
      expect(line!.split(" ")[0]).toBe(delivery!.eventId);
      await waitFor("SUCCESS", async () => {
        const res = await d.api(
          "GET",
          `/api/admin/webhooks/${endpoint.id}/deliveries/${delivery!.id}`,
        );
        return res.json().status === "SUCCESS";
      });

      // A forged signature is answered 401.
      const forged = await fetch(`http://127.0.0.1:${port}/hook`, {
        method: "POST",
        headers: {
          "webhook-id": "evt_forged",
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": "v1,AAAA",
          "content-type": "application/json",
        },
        body: "{}",
      });
      expect(forged.status).toBe(401);

      // The delivery replayed with only the timestamp-less parley header: refused, never a
      // fall-back to that scheme.
      const body = JSON.stringify(
        (await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${delivery!.id}`)).json()
          .payload,
      );
      const replayed = await fetch(`http://127.0.0.1:${port}/hook`, {
        method: "POST",
        headers: {
          "x-webhook-signature-256": signWebhookPayload(oldSecret, body),
          "content-type": "application/json",
        },
        body,
      });
      expect(replayed.status).toBe(401);
      expect(newSecret).toMatch(/^whsec_/);
    });
  }
});
