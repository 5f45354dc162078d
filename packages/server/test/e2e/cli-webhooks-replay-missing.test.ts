import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { runCli as parley } from "../helpers/run-cli.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

describe("parley webhooks replay-missing", () => {
  let c: ClientApp;
  let receiver: Receiver;
  let env: Record<string, string>;
  beforeAll(async () => {
    c = await startClientApp(SQLITE, { deliveries: true });
    receiver = await startReceiver();
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
  });
  afterAll(async () => {
    await receiver?.close();
    await c?.close();
  });

  it("counts the events an endpoint never got, refuses to send them unasked from a script, and sends them with --yes", async () => {
    // Events from before the endpoint existed: it never got them.
    const { data: first } = await c.admin("POST /api/rooms", { name: "before-1" });
    const { data: second } = await c.admin("POST /api/rooms", { name: "before-2" });
    const { data: webhook } = await c.admin("POST /api/admin/webhooks", {
      data: {
        name: "late",
        url: receiver.url,
        secret: "a-long-enough-secret",
        events: ["ROOM_CREATED"],
      },
    });
    const id = String(webhook.id);

    const counted = await parley(
      ["webhooks", "replay-missing", id, "--since", "1h", "--dry-run"],
      env,
    );
    expect(counted.stderr).toBe("");
    expect(counted.code).toBe(0);
    expect(counted.stdout).toMatch(
      new RegExp(`^2 missing events for webhook ${id} \\(since \\S+Z\\); nothing was sent\\.\\n$`),
    );
    const unasked = await parley(["webhooks", "replay-missing", id, "--since", "1h"], env);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toMatch(
      /^parley: 2 missing events for webhook \d+ \(since \S+Z\) would be sent: pass --yes to send them, or --dry-run to only count\n$/,
    );
    expect(receiver.requests).toHaveLength(0);

    const sent = await parley(["webhooks", "replay-missing", id, "--since", "1h", "--yes"], env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(new RegExp(`^Queued 2 missing events for webhook ${id} `));
    const requests = await receiver.waitForRequests(2);
    expect(
      requests.map(
        (r) => (JSON.parse(r.body.toString()) as { data: { roomId: number } }).data.roomId,
      ),
    ).toEqual([first.id, second.id]);

    const none = await parley(
      ["webhooks", "replay-missing", id, "--since", "1h", "--dry-run", "--json"],
      env,
    );
    expect(JSON.parse(none.stdout)).toEqual({ wouldQueue: 0 });
    const missing = await parley(
      ["webhooks", "replay-missing", "999999", "--since", "1h", "--yes"],
      env,
    );
    expect(missing.code).toBe(3);
  }, 90_000);
});
