import type { DeliveryDetail, Webhook } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

const HOUR = 3_600_000;

/**
 * States that explain themselves (docs/webhooks.md, "Endpoint states"): an endpoint's `state`,
 * when the auto-disable rule will disable a failing one, which attempt disabled it, and a
 * delivery's attempt count against its maximum and whether it is held.
 */
describeEachDialect("endpoint and delivery states on $name", (dialect) => {
  let d: OperatingApp;
  beforeAll(async () => {
    d = await startOperatingApp(dialect, {
      webhookAutoDisableMinFailures: 3,
      webhookAutoDisableAfterMs: HOUR,
      webhookMaxAttempts: 2,
    });
  });
  afterAll(() => d?.close());

  const view = async (id: number) =>
    (await d.api("GET", `/api/admin/webhooks/${id}`)).json<Webhook>();
  const detail = async (webhookId: number, deliveryId: number) =>
    (await d.api("GET", `/api/admin/webhooks/${webhookId}/deliveries/${deliveryId}`)).json<
      DeliveryDetail & { held: boolean; maxAttempts: number }
    >();

  it("is enabled until an attempt fails, then failing with when the rule will disable it", async () => {
    const receiver = await d.receiver();
    receiver.respondWith(() => ({ status: 500 }));
    const endpoint = await d.create({ name: "Flaky", url: receiver.url });
    expect(endpoint).toMatchObject({
      state: "enabled",
      autoDisableAt: null,
      failuresToAutoDisable: null,
      disabledBy: null,
    });
    await d.emitUser("flaky-1");
    const [row] = await waitFor("the delivery exhausted", async () => {
      const rows = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id);
      return rows[0]?.status === "EXHAUSTED" && rows;
    });
    const failing = await view(endpoint.id);
    expect(failing.state).toBe("failing");
    expect(failing.enabled).toBe(true);
    expect(failing.health.consecutiveFailures).toBe(2);
    const since = Date.parse(failing.health.failingSince!);
    expect(failing.autoDisableAt).toBe(new Date(since + HOUR).toISOString());
    expect(failing.failuresToAutoDisable).toBe(1);

    // The EXHAUSTED delivery says it used every attempt it had.
    const exhausted = await detail(endpoint.id, row!.id);
    expect(exhausted).toMatchObject({
      status: "EXHAUSTED",
      attempts: 2,
      maxAttempts: 2,
      nextAttemptAt: null,
      held: false,
      webhookName: "Flaky",
      webhookUrl: receiver.url,
      eventId: row!.event_id,
    });

    // A success ends the run: enabled again, nothing scheduled.
    receiver.respondWith(() => ({ status: 204 }));
    await d.emitUser("flaky-2");
    await receiver.waitForRequests(3);
    const recovered = await waitFor("the success recorded", async () => {
      const v = await view(endpoint.id);
      return v.health.consecutiveFailures === 0 && v;
    });
    expect(recovered).toMatchObject({
      state: "enabled",
      autoDisableAt: null,
      failuresToAutoDisable: null,
    });
    expect(recovered.health.failingSince).toBeNull();
  });

  it("names the attempt that disabled it, and holds its deliveries until it is enabled", async () => {
    const receiver = await d.receiver();
    receiver.respondWith(() => ({ status: 500 }));
    const endpoint = await d.create({ name: "Dying", url: receiver.url });
    await d.emitUser("dying-1");
    await waitFor("the first delivery exhausted", async () =>
      (await d.deliveries()).some((r) => r.webhook_id === endpoint.id && r.status === "EXHAUSTED"),
    );
    // The run began more than the hour ago: the next failed attempt meets the rule.
    await d.t.ctx.db
      .updateTable("webhooks")
      .set({ failing_since: Date.now() - HOUR - 60_000 })
      .where("id", "=", endpoint.id)
      .execute();
    await d.emitUser("dying-2");
    const disabled = await waitFor("the endpoint auto-disabled", async () => {
      const v = await view(endpoint.id);
      return v.state === "disabled" && v;
    });
    const second = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id)[1]!;
    expect(disabled).toMatchObject({
      enabled: false,
      disabledReason: "auto_failing",
      disabledBy: { deliveryId: second.id, attempt: 1 },
      autoDisableAt: null,
    });
    // Its failed delivery waits: held, its next attempt not made while disabled.
    const held = await detail(endpoint.id, second.id);
    expect(held).toMatchObject({ status: "FAILED", attempts: 1, maxAttempts: 2, held: true });

    // Enabled again: sending, nothing blamed any more, the delivery no longer held.
    receiver.respondWith(() => ({ status: 204 }));
    const enabled = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: true });
    expect(enabled.json()).toMatchObject({ state: "enabled", disabledBy: null });
    const sent = await waitFor("the held delivery sent", async () => {
      const v = await detail(endpoint.id, second.id);
      return v.status === "SUCCESS" && v;
    });
    expect(sent.held).toBe(false);
    // A manual disable blames no attempt.
    const off = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { enabled: false });
    expect(off.json()).toMatchObject({
      state: "disabled",
      disabledReason: "manual",
      disabledBy: null,
    });
  });

  it("blames the 410 attempt for a disable by Gone", async () => {
    const receiver = await d.receiver();
    receiver.respondWith(() => ({ status: 410 }));
    const endpoint = await d.create({ url: receiver.url });
    await d.emitUser("gone");
    const disabled = await waitFor("the endpoint disabled", async () => {
      const v = await view(endpoint.id);
      return v.state === "disabled" && v;
    });
    const [row] = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id);
    expect(disabled).toMatchObject({
      disabledReason: "gone",
      disabledBy: { deliveryId: row!.id, attempt: 1 },
    });
  });
});
