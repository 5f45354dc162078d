import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { runCli as parley } from "../helpers/run-cli.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

describe("parley webhooks trigger <event> and webhooks test --event", () => {
  let c: ClientApp;
  let receiver: Receiver;
  let env: Record<string, string>;
  let messages: number;
  let rooms: number;
  beforeAll(async () => {
    c = await startClientApp(SQLITE, { deliveries: true });
    receiver = await startReceiver();
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
    const endpoint = async (path: string, events: string[], enabled = true) =>
      (
        await c.admin("POST /api/admin/webhooks", {
          data: {
            name: path,
            url: `${receiver.origin}/${path}`,
            secret: "a-long-enough-secret",
            events: events as never,
            enabled,
          },
        })
      ).data.id;
    messages = await endpoint("messages", ["MESSAGE_*"]);
    rooms = await endpoint("rooms", ["ROOM_CREATED"]);
    await endpoint("disabled", ["*"], false);
  });
  afterAll(async () => {
    await receiver?.close();
    await c?.close();
  });

  const SPAWNS = 90_000;

  it(
    "sends the catalogue's sample to every enabled endpoint subscribed to the event, and waits for it",
    async () => {
      const before = receiver.requests.length;
      const run = await parley(["webhooks", "trigger", "message_created", "--wait"], env);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        new RegExp(
          `^Sample MESSAGE_CREATED to webhook ${messages}, delivery \\d+: SUCCESS \\(answered 204, \\d+ ms\\)\\n$`,
        ),
      );
      const sent = receiver.requests.slice(before);
      expect(sent.map((r) => r.path)).toEqual(["/messages"]);
      const { data: types } = await c.admin("GET /api/admin/webhooks/event-types");
      const sample = types.items.find((t) => t.name === "MESSAGE_CREATED")!.sample;
      const body = JSON.parse(sent[0]!.body.toString()) as { event: string; data: unknown };
      expect(body.event).toBe("MESSAGE_CREATED");
      expect(body.data).toEqual(sample.data);
    },
    SPAWNS,
  );

  it(
    "sends to the endpoints named, exits 3 when none subscribes, 2 for an unknown event",
    async () => {
      const nobody = await parley(["webhooks", "trigger", "ROOM_DELETED"], env);
      expect(nobody.code).toBe(3);
      expect(nobody.stderr).toBe(
        "parley: no enabled endpoint subscribes to ROOM_DELETED: name one with --webhook <id> (a test goes to any endpoint)\n",
      );
      const named = await parley(
        ["webhooks", "trigger", "ROOM_DELETED", "--webhook", String(rooms), "--json"],
        env,
      );
      expect(named.code).toBe(0);
      expect(JSON.parse(named.stdout)).toEqual([
        { webhookId: rooms, deliveryId: expect.any(Number), status: "PENDING", held: false },
      ]);
      const unknown = await parley(["webhooks", "trigger", "ROOM_EXPLODED"], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(
        /^parley: event must be one of MESSAGE_CREATED, .*; got "ROOM_EXPLODED"\n$/,
      );
    },
    SPAWNS,
  );

  it(
    "sends another event's sample with webhooks test --event",
    async () => {
      const before = receiver.requests.length;
      const run = await parley(
        ["webhooks", "test", String(rooms), "--event", "USER_JOINED_ROOM", "--wait"],
        env,
      );
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^Test delivery \d+: SUCCESS \(answered 204, \d+ ms\)$/m);
      const sent = receiver.requests.slice(before).find((r) => r.path === "/rooms")!;
      expect(JSON.parse(sent.body.toString()).event).toBe("USER_JOINED_ROOM");
    },
    SPAWNS,
  );
});
