import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { runCli as parley } from "../helpers/run-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

describe("parley webhooks redeliver <deliveryId>, events resend and recover --dry-run", () => {
  let c: ClientApp;
  let receiver: Receiver;
  let env: Record<string, string>;
  let failing: number;
  let healthy: number;
  let eventId: string;
  let goodEventId: string;
  let failedDelivery: number;
  let goodDelivery: number;
  beforeAll(async () => {
    c = await startClientApp(SQLITE, {
      deliveries: true,
      // A failed delivery stays FAILED while the tests look at it.
      config: { webhookBackoffBaseMs: 600_000, webhookBackoffMaxMs: 600_000 },
    });
    receiver = await startReceiver();
    receiver.respondWith((req) => ({ status: req.path === "/failing" ? 500 : 204 }));
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
    const endpoint = async (path: string) =>
      (
        await c.admin("POST /api/admin/webhooks", {
          data: {
            name: path,
            url: `${receiver.origin}/${path}`,
            secret: "a-long-enough-secret",
            events: ["ROOM_CREATED"],
          },
        })
      ).data.id;
    failing = await endpoint("failing");
    healthy = await endpoint("healthy");
    await c.admin("POST /api/rooms", { name: "resent" });
    const settled = await waitFor("one delivery FAILED and the other SUCCESS", async () => {
      const { data } = await c.admin("GET /api/admin/deliveries", { event: "ROOM_CREATED" });
      const failed = data.items.find((d) => d.webhookId === failing && d.status === "FAILED");
      const ok = data.items.find((d) => d.webhookId === healthy && d.status === "SUCCESS");
      return failed && ok ? { failed, ok } : undefined;
    });
    eventId = settled.failed.eventId;
    goodEventId = settled.ok.eventId;
    failedDelivery = settled.failed.id;
    goodDelivery = settled.ok.id;
  });
  afterAll(async () => {
    await receiver?.close();
    await c?.close();
  });

  const SPAWNS = 90_000;

  async function deliveryCount(webhookId: number): Promise<number> {
    const { data } = await c.admin("GET /api/admin/webhooks/{id}/deliveries", {
      id: webhookId,
      limit: 200,
    });
    return data.items.length;
  }

  it(
    "counts with recover --dry-run and queues nothing",
    async () => {
      const before = await deliveryCount(failing);
      const text = await parley(
        [
          "webhooks",
          "recover",
          String(failing),
          "--since",
          "1h",
          "--status",
          "FAILED",
          "--dry-run",
        ],
        env,
      );
      expect(text.stderr).toBe("");
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(
        new RegExp(
          `^Would queue 1 delivery again for webhook ${failing} \\(FAILED, queued since \\S+Z\\); nothing was queued`,
        ),
      );
      const json = await parley(
        [
          "webhooks",
          "recover",
          String(failing),
          "--since",
          "1h",
          "--status",
          "FAILED",
          "--dry-run",
          "--json",
        ],
        env,
      );
      expect(JSON.parse(json.stdout)).toEqual({ wouldQueue: 1 });
      expect(await deliveryCount(failing)).toBe(before);
    },
    SPAWNS,
  );

  it(
    "redelivers a delivery named by its id alone, and follows it with --wait",
    async () => {
      const before = receiver.requests.filter((r) => r.path === "/healthy").length;
      const waited = await parley(["webhooks", "redeliver", String(goodDelivery), "--wait"], env);
      expect(waited.stderr).toBe("");
      expect(waited.stdout).toMatch(/^Redelivery \d+: SUCCESS \(answered 204, \d+ ms\)$/m);
      expect(waited.code).toBe(0);
      const bodies = receiver.requests
        .filter((r) => r.path === "/healthy")
        .map((r) => r.body.toString());
      expect(bodies).toHaveLength(before + 1);
      expect(bodies.at(-1)).toBe(bodies[0]);

      const queued = await parley(["webhooks", "redeliver", String(failedDelivery), "--json"], env);
      expect(queued.code).toBe(0);
      expect(JSON.parse(queued.stdout)).toEqual({
        webhookId: failing,
        deliveryId: expect.any(Number),
      });
      const failedAgain = await parley(
        ["webhooks", "redeliver", String(failedDelivery), "--wait", "--json"],
        env,
      );
      expect(failedAgain.code).toBe(1);
      expect(JSON.parse(failedAgain.stdout)).toMatchObject({ status: "FAILED", eventId });

      const missing = await parley(["webhooks", "redeliver", "999999"], env);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toBe("parley: not_found: no delivery 999999\n");
    },
    SPAWNS,
  );

  it(
    "resends an event by its id to the endpoint that got it",
    async () => {
      const text = await parley(["events", "resend", goodEventId], env);
      expect(text.stderr).toBe("");
      expect(text.code).toBe(0);
      const resentTo = Number(
        new RegExp(
          `^Queued delivery (\\d+) to webhook ${healthy}: event ${goodEventId}, sent again\\.$`,
        ).exec(text.stdout.trim())?.[1],
      );
      const resent = await waitFor("the resent delivery to succeed", async () => {
        const { data } = await c.admin("GET /api/admin/webhooks/{id}/deliveries/{deliveryId}", {
          id: healthy,
          deliveryId: resentTo,
        });
        return data.status === "SUCCESS" ? data : undefined;
      });
      expect(resent.eventId).toBe(goodEventId);

      const json = await parley(["events", "resend", eventId, "--json"], env);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({
        eventId,
        webhookId: failing,
        deliveryId: expect.any(Number),
      });

      const unknown = await parley(
        ["events", "resend", "evt_00000000000000000000000000", "--json"],
        env,
      );
      expect(unknown.code).toBe(3);
      expect(JSON.parse(unknown.stdout).error.code).toBe("not_found");
      const bad = await parley(["events", "resend", "42"], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe('parley: event id must look like evt_01J..., got "42"\n');
    },
    SPAWNS,
  );
});
