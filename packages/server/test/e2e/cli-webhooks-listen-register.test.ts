import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { RequestError } from "@parley/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { CLI, cliEnv, runCli as parley } from "../helpers/run-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

interface Listener {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first line of stdout or stderr matching `pattern`. */
  line(pattern: RegExp): Promise<string>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

const children: ChildProcessWithoutNullStreams[] = [];

/** The lines of `text` that have their newline. */
function completeLines(text: string): string[] {
  return text.split("\n").slice(0, -1);
}

function listen(args: string[], env: Record<string, string>): Listener {
  const child = spawn(process.execPath, [CLI, "webhooks", "listen", "--port", "0", ...args], {
    env: cliEnv(env),
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    line: (pattern) =>
      waitFor(
        `a line matching ${pattern} in:\n${out}${err}`,
        // Whole lines only: a chunk may end in the middle of one.
        async () => [...completeLines(out), ...completeLines(err)].find((l) => pattern.test(l)),
        15_000,
      ),
    exited,
  };
}

const SECRET_A = "whsec_Y2xpLWxpc3Rlbi1zZWNyZXQtMDEyMzQ1Njc4OQ==";
const SECRET_B = "a-second-secret-of-another-endpoint";

describe("parley webhooks listen --register, --events and several --secret", () => {
  let c: ClientApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    c = await startClientApp(SQLITE, { deliveries: true });
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
  });
  afterAll(async () => {
    await c?.close();
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  });

  async function gone(id: number): Promise<boolean> {
    try {
      await c.admin("GET /api/admin/webhooks/{id}", { id });
      return false;
    } catch (error) {
      if (error instanceof RequestError && error.status === 404) return true;
      throw error;
    }
  }

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`registers its own endpoint for the events asked, prints only those, and deletes it on ${signal}`, async () => {
      const listener = listen(["--register", "--events", "message_*"], env);
      const url = /on (http:\/\/\S+)$/.exec(
        await listener.line(/^Listening for Parley webhooks on /),
      )![1]!;
      const registered = await listener.line(/^Registered webhook \d+/);
      const id = Number(/^Registered webhook (\d+)/.exec(registered)![1]);
      expect(registered).toBe(
        `Registered webhook ${id} "parley webhooks listen on ${new URL(url).host}" -> ${url} ` +
          "for MESSAGE_*, signed both; it is deleted when this stops.",
      );
      const secret = /^ {2}secret \(generated, shown only now\): (whsec_\S+)$/m.exec(
        listener.stdout(),
      )?.[1];
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const { data: webhook } = await c.admin("GET /api/admin/webhooks/{id}", { id });
      expect(webhook).toMatchObject({ url, events: ["MESSAGE_*"], signatureScheme: "both" });

      const { data: room } = await c.admin("POST /api/rooms", { name: `registered-${signal}` });
      await c.admin("POST /api/rooms/{roomId}/messages", { roomId: room.id, content: "hi" });
      expect(await listener.line(/✓ MESSAGE_CREATED/)).toContain(
        `webhook ${id}  roomId=${room.id}`,
      );
      expect(listener.stdout()).not.toContain("ROOM_CREATED");

      listener.child.kill(signal);
      expect(await listener.exited).toBe(0);
      expect(listener.stdout()).toMatch(new RegExp(`^Deleted webhook ${id}\\.$`, "m"));
      expect(listener.stderr()).toBe("");
      expect(await gone(id)).toBe(true);
    }, 60_000);
  }

  it("verifies with each of several secrets and prints only the events of --events", async () => {
    const listener = listen(
      ["--secret", SECRET_A, "--secret", SECRET_B, "--events", "ROOM_CREATED,MESSAGE_*"],
      {},
    );
    const url = /on (http:\/\/\S+)$/.exec(
      await listener.line(/^Listening for Parley webhooks on /),
    )![1]!;
    const ids: number[] = [];
    for (const secret of [SECRET_A, SECRET_B]) {
      const { data } = await c.admin("POST /api/admin/webhooks", {
        data: { name: "two secrets", url, secret, events: ["*"] },
      });
      ids.push(data.id);
    }
    const { data: room } = await c.admin("POST /api/rooms", { name: "two-secrets" });
    await c.admin("POST /api/rooms/{roomId}/messages", { roomId: room.id, content: "x" });
    await c.admin("DELETE /api/rooms/{roomId}", { roomId: room.id });
    for (const id of ids) {
      await listener.line(new RegExp(`✓ ROOM_CREATED  webhook ${id} `));
      await listener.line(new RegExp(`✓ MESSAGE_CREATED  webhook ${id} `));
    }
    // ROOM_DELETED went out to both endpoints and was verified, but --events leaves it out.
    await waitFor("both ROOM_DELETED deliveries to succeed", async () => {
      const { data } = await c.admin("GET /api/admin/deliveries", {
        event: "ROOM_DELETED",
        status: "SUCCESS",
      });
      return data.items.filter((d) => ids.includes(d.webhookId)).length === 2 || undefined;
    });
    expect(listener.stdout()).not.toContain("ROOM_DELETED");
    expect(listener.stdout()).not.toContain("rejected");
    for (const id of ids) await c.admin("DELETE /api/admin/webhooks/{id}", { id });
  }, 60_000);

  it("refuses --register without PARLEY_TOKEN (2) and explains a server that will not send to the listener (4)", async () => {
    const noToken = await parley(["webhooks", "listen", "--port", "0", "--register"], {
      PARLEY_URL: c.baseUrl,
    });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/^parley: PARLEY_TOKEN is not set/);
    expect(noToken.stdout).toBe("");

    const strict = await startClientApp(SQLITE, {
      config: { webhookAllowHttp: false, webhookAllowPrivateNetworks: false },
    });
    try {
      const listener = listen(["--register", "--json"], {
        PARLEY_URL: strict.baseUrl,
        PARLEY_TOKEN: strict.t.admin.token,
      });
      expect(await listener.exited).toBe(4);
      const { error } = JSON.parse(listener.stdout()) as {
        error: { code: string; message: string };
      };
      expect(error.code).toBe("url_scheme_not_allowed");
      expect(error.message).toContain("PARLEY_WEBHOOK_ALLOW_HTTP=true");
      expect(error.message).toContain("--public-url");
      const { data: left } = await strict.admin("GET /api/admin/webhooks");
      expect(left.items).toEqual([]);
    } finally {
      await strict.close();
    }
  }, 60_000);
});
