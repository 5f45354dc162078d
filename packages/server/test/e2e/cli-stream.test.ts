import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../helpers/build-app.js";
import { SQLITE } from "../helpers/dialects.js";

// The BUILT command line, run as a person runs it.
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/cli.js");

/** Starts `parley stream ...`; lines arrive as it prints them. */
function tail(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, "stream", ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  let stdout = "";
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const wake of [...waiters]) wake();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const wake of [...waiters]) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    exited,
    output: () => ({ stdout, stderr }),
    until(condition: () => boolean, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!condition()) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out; stdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    kill: () => child.kill("SIGKILL"),
  };
}

describe("parley stream --room", () => {
  let t: TestApp;
  let env: Record<string, string>;
  let gus: TestUser;

  beforeAll(async () => {
    t = await createTestApp(SQLITE);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    gus = await t.user("user", "gus");
    env = {
      PARLEY_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
      PARLEY_TOKEN: gus.token,
    };
  });
  afterAll(async () => {
    await t?.close();
  });

  const api = (method: string, url: string, payload?: object) =>
    t.app.inject({
      method: method as "GET",
      url,
      headers: gus.headers,
      ...(payload ? { payload } : {}),
    });

  it("prints messages (after --after first), presence and joins live, and ends with the room", async () => {
    const roomId = (await api("POST", "/api/rooms", { name: "tail" })).json().id as number;
    const before = (
      await api("POST", `/api/rooms/${roomId}/messages`, { content: "before" })
    ).json().id as number;
    await api("POST", `/api/rooms/${roomId}/messages`, { content: "missed *one*" });
    const run = tail(["--room", String(roomId), "--after", String(before)], env);
    await run.until(() => run.output().stdout.includes("present: gus"));
    await api("POST", `/api/rooms/${roomId}/messages`, { content: "live **two**" });
    await run.until(() => run.output().stdout.includes("live two"));
    expect((await api("DELETE", `/api/rooms/${roomId}`)).statusCode).toBe(204);
    expect(await run.exited).toBe(0);

    const lines = run.output().stdout.trim().split("\n");
    const messages = lines
      .filter((line) => / #\d+ gus: /.test(line))
      .map((line) => line.replace(/^\S+ #\d+ /, ""));
    expect(messages).toEqual(["gus: missed one", "gus: live two"]);
    expect(lines.some((line) => line.endsWith(" gus joined (presence)"))).toBe(true);
    expect(lines.at(-1)).toMatch(/the room was deleted by gus$/);
    expect(run.output().stderr).toContain(`streaming room ${roomId} as gus`);
  });

  it("prints one JSON frame per line with --json: the documented event and presence frames", async () => {
    const roomId = (await api("POST", "/api/rooms", { name: "tail-json" })).json().id as number;
    const before = (
      await api("POST", `/api/rooms/${roomId}/messages`, { content: "before" })
    ).json().id as number;
    await api("POST", `/api/rooms/${roomId}/messages`, { content: "missed *one*" });
    const run = tail(["--room", String(roomId), "--after", String(before), "--json"], env);
    await run.until(() => run.output().stdout.includes('"type":"presence"'));
    const live = (
      await api("POST", `/api/rooms/${roomId}/messages`, { content: "live **two**" })
    ).json().id as number;
    await run.until(() => run.output().stdout.includes(`"messageId":${live}`));
    expect((await api("DELETE", `/api/rooms/${roomId}`)).statusCode).toBe(204);
    expect(await run.exited).toBe(0);

    // Every line is one JSON frame; the banner stays on stderr.
    const frames = run
      .output()
      .stdout.trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(run.output().stderr).toContain(`streaming room ${roomId} as gus`);
    expect(frames).toContainEqual({ type: "presence", roomId, present: ["gus"] });
    expect(frames).toContainEqual({
      type: "event",
      event: "USER_JOINED_ROOM",
      roomId,
      data: { roomId, username: "gus", via: "presence" },
    });
    const messages = frames.filter((frame) => frame.event === "MESSAGE_CREATED");
    expect(messages).toHaveLength(2);
    const at = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(messages[1]).toEqual({
      type: "event",
      event: "MESSAGE_CREATED",
      roomId,
      data: {
        roomId,
        messageId: live,
        senderId: gus.id,
        timestamp: at,
        threadId: null,
        mentions: [],
        message: {
          id: live,
          roomId,
          content: "live **two**",
          contentFormat: "markdown",
          sender: {
            type: "user",
            id: gus.id,
            username: "gus",
            displayName: expect.any(String),
            avatarUrl: null,
          },
          inboundWebhookId: null,
          moderationStatus: "none",
          createdAt: at,
          threadId: null,
          replyCount: 0,
          lastReplyAt: null,
          revision: 1,
          editedAt: null,
          updatedAt: at,
          reactions: [],
          files: [],
          contentRaw: "live **two**",
          contentText: "live two",
          contentHtml: "<p>live <strong>two</strong></p>\n",
        },
      },
    });
    expect(messages[0]).toMatchObject({
      data: { message: { content: "missed *one*", contentText: "missed one" } },
    });
    expect(frames.at(-1)).toMatchObject({
      type: "event",
      event: "ROOM_DELETED",
      roomId,
      data: { roomId, deletedBy: "gus" },
    });
  });

  it("fails with a clear message for a room the user is not in (exit 3), and for a refused token (exit 4)", async () => {
    const other = await t.user("user", "hal");
    const roomId = (
      await t.app.inject({
        method: "POST",
        url: "/api/rooms",
        headers: other.headers,
        payload: { name: "x" },
      })
    ).json().id as number;
    const forbidden = tail(["--room", String(roomId)], env);
    expect(await forbidden.exited).toBe(3); // not found
    expect(forbidden.output().stderr).toContain(
      `room ${roomId} does not exist or you are not a member`,
    );

    const refused = tail(["--room", String(roomId)], { ...env, PARLEY_TOKEN: "nope" });
    expect(await refused.exited).toBe(4); // refused
    expect(refused.output().stderr).toContain("the server refused PARLEY_TOKEN (4401)");
  });
});
