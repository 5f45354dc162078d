import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import type { RecordedRequest, Receiver } from "../../../../helpers/receiver.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { expectedSignature } from "../delivery-engine/delivery-fixture.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

interface Envelope {
  event: string;
  webhookId: number;
  data: Record<string, unknown>;
}

function envelopeOf(request: RecordedRequest): Envelope {
  return JSON.parse(request.body.toString("utf8")) as Envelope;
}

/** A receiver that echoes each challenge as `style` says, and answers 204 to everything else. */
function echoChallenges(receiver: Receiver, style: "text" | "json" | "none" = "text"): void {
  receiver.respondWith((request) => {
    const envelope = envelopeOf(request);
    if (envelope.event !== "WEBHOOK_VERIFICATION") return { status: 204 };
    const challenge = envelope.data.challenge as string;
    if (style === "none") return { status: 200, body: "ok" };
    return style === "text"
      ? { status: 200, body: `${challenge}\n`, headers: { "content-type": "text/plain" } }
      : {
          status: 200,
          body: JSON.stringify({ challenge }),
          headers: { "content-type": "application/json" },
        };
  });
}

describeEachDialect("the ownership check on $name", (dialect) => {
  describe("with PARLEY_WEBHOOK_VERIFY_OWNERSHIP=true", () => {
    let d: OperatingApp;
    beforeAll(async () => {
      d = await startOperatingApp(dialect, { webhookVerifyOwnership: true });
    });
    afterAll(() => d?.close());

    const get = async (id: number) => (await d.api("GET", `/api/admin/webhooks/${id}`)).json();

    it("holds a new endpoint's deliveries until its receiver echoes the signed challenge, then releases them", async () => {
      const receiver = await d.receiver();
      let release = false;
      receiver.respondWith((request) => {
        const envelope = envelopeOf(request);
        if (envelope.event !== "WEBHOOK_VERIFICATION") return { status: 204 };
        // Not yet: a plain 200 without the challenge is a failed attempt.
        return release
          ? { status: 200, body: envelope.data.challenge as string }
          : { status: 200, body: "hello" };
      });
      const endpoint = await d.create({ url: receiver.url, secret: SECRET });
      expect(endpoint.verification).toBe("pending");
      await d.emitUser("held-1");
      const test = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/test`);
      expect(test.statusCode).toBe(202);
      expect(test.json().held).toBe(true);

      const [challenge] = await receiver.waitForRequests(1);
      const envelope = envelopeOf(challenge!);
      expect(envelope).toMatchObject({
        event: "WEBHOOK_VERIFICATION",
        webhookId: endpoint.id,
        data: { challenge: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/) },
      });
      // Signed like every delivery of the endpoint's scheme.
      expect(challenge!.headers["x-webhook-signature-256"]).toBe(
        expectedSignature(SECRET, challenge!.body),
      );
      // Retried like a delivery; nothing else goes meanwhile, the test delivery included.
      await receiver.waitForRequests(3);
      expect(receiver.requests.map((r) => envelopeOf(r).event)).toEqual([
        "WEBHOOK_VERIFICATION",
        "WEBHOOK_VERIFICATION",
        "WEBHOOK_VERIFICATION",
      ]);
      expect((await get(endpoint.id)).verification).toBe("pending");
      const log = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`)).json()
        .items as Array<{ id: number; event: string; status: string; attempts: number }>;
      const logged = log.find((item) => item.event === "WEBHOOK_VERIFICATION")!;
      expect(logged.status).toBe("FAILED");
      const detail = (
        await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries/${logged.id}`)
      ).json();
      expect(detail.attemptHistory[0]).toMatchObject({
        responseStatus: 200,
        responseBody: "hello",
        error: expect.stringContaining("without the challenge"),
      });

      release = true;
      await waitFor("verified", async () => (await get(endpoint.id)).verification === "verified");
      // The held event and test go out after it.
      await waitFor(
        "the held deliveries",
        () =>
          receiver.requests.some((r) => envelopeOf(r).event === "ADMIN_USER_DISABLED") &&
          receiver.requests.some((r) => envelopeOf(r).event === "WEBHOOK_TEST"),
      );
      const events = receiver.requests.map((r) => envelopeOf(r).event);
      const lastChallenge = events.lastIndexOf("WEBHOOK_VERIFICATION");
      expect(events.indexOf("ADMIN_USER_DISABLED")).toBeGreaterThan(lastChallenge);
      expect(events.indexOf("WEBHOOK_TEST")).toBeGreaterThan(lastChallenge);
      const after = (await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`)).json()
        .items as Array<{ id: number; event: string; status: string }>;
      expect(after.find((item) => item.id === logged.id)!.status).toBe("SUCCESS");
    });

    it('accepts the challenge as JSON {"challenge": ...}, and refuses a body that only contains it', async () => {
      const json = await d.receiver();
      echoChallenges(json, "json");
      const a = await d.create({ url: json.url });
      await waitFor("verified by JSON", async () => (await get(a.id)).verification === "verified");

      const chatty = await d.receiver();
      chatty.respondWith((request) => ({
        status: 200,
        body: `your challenge was ${envelopeOf(request).data.challenge as string}, thanks`,
      }));
      const b = await d.create({ url: chatty.url });
      await chatty.waitForRequests(2);
      expect((await get(b.id)).verification).toBe("pending");
    });

    it("checks again when the url changes: a new challenge, deliveries held meanwhile; verify sends it again", async () => {
      const first = await d.receiver();
      echoChallenges(first);
      const endpoint = await d.create({ url: first.url });
      await waitFor("verified", async () => (await get(endpoint.id)).verification === "verified");
      const firstChallenge = envelopeOf(first.requests[0]!).data.challenge;

      const second = await d.receiver();
      echoChallenges(second, "none");
      const moved = (
        await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { url: second.url })
      ).json();
      expect(moved.verification).toBe("pending");
      // Renaming does not ask again.
      const renamed = (
        await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { name: "renamed" })
      ).json();
      expect(renamed.verification).toBe("pending");
      await d.emitUser("held-after-move");
      const [challenge] = await second.waitForRequests(1);
      expect(envelopeOf(challenge!).data.challenge).not.toBe(firstChallenge);
      await second.waitForRequests(2);
      expect(second.requests.every((r) => envelopeOf(r).event === "WEBHOOK_VERIFICATION")).toBe(
        true,
      );
      expect(first.requests.some((r) => envelopeOf(r).event === "ADMIN_USER_DISABLED")).toBe(false);

      // The receiver is fixed; POST verify sends the same challenge again at once.
      echoChallenges(second);
      const seen = second.requests.length;
      const verify = await d.api("POST", `/api/admin/webhooks/${endpoint.id}/verify`);
      expect(verify.statusCode).toBe(202);
      expect(verify.json()).toEqual({
        deliveryId: expect.any(Number),
        status: "PENDING",
        held: false,
      });
      await waitFor(
        "verified again",
        async () => (await get(endpoint.id)).verification === "verified",
      );
      const resent = second.requests.slice(seen).map((r) => envelopeOf(r));
      expect(resent.some((e) => e.data.challenge === envelopeOf(challenge!).data.challenge)).toBe(
        true,
      );
      await waitFor("the held event", () =>
        second.requests.some((r) => envelopeOf(r).event === "ADMIN_USER_DISABLED"),
      );
      expect((await d.api("POST", "/api/admin/webhooks/999999/verify")).statusCode).toBe(404);
    });

    it("sends the challenge to a disabled endpoint, but not its test delivery, and does not enable it", async () => {
      const receiver = await d.receiver();
      echoChallenges(receiver);
      const endpoint = await d.create({ url: receiver.url, enabled: false });
      await waitFor("verified", async () => (await get(endpoint.id)).verification === "verified");
      expect((await get(endpoint.id)).enabled).toBe(false);

      const pending = await d.receiver();
      echoChallenges(pending, "none");
      const other = await d.create({ url: pending.url, enabled: false });
      await d.api("POST", `/api/admin/webhooks/${other.id}/test`);
      await pending.waitForRequests(2);
      await sleep(300);
      expect(pending.requests.every((r) => envelopeOf(r).event === "WEBHOOK_VERIFICATION")).toBe(
        true,
      );
    });

    it("lets the challenge past an ordered endpoint's lanes, then sends the held events in order", async () => {
      const receiver = await d.receiver();
      let release = false;
      receiver.respondWith((request) => {
        const envelope = envelopeOf(request);
        if (envelope.event !== "WEBHOOK_VERIFICATION") return { status: 204 };
        return { status: 200, body: release ? (envelope.data.challenge as string) : "" };
      });
      const endpoint = await d.create({ url: receiver.url, ordering: "endpoint" });
      for (const n of [1, 2, 3]) await d.emitUser(`ordered-${n}`);
      // The ordering changes while pending: the challenge stays out of the lanes.
      await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { ordering: "room" });
      await receiver.waitForRequests(2);
      release = true;
      await waitFor(
        "three events",
        () =>
          receiver.requests.filter((r) => envelopeOf(r).event === "ADMIN_USER_DISABLED").length ===
          3,
      );
      const users = receiver.requests
        .map((r) => envelopeOf(r))
        .filter((e) => e.event === "ADMIN_USER_DISABLED")
        .map((e) => e.data.username);
      expect(users).toEqual(["ordered-1", "ordered-2", "ordered-3"]);
      const row = await d.t.ctx.db
        .selectFrom("webhook_deliveries")
        .select(["lane"])
        .where("webhook_id", "=", endpoint.id)
        .where("event", "=", "WEBHOOK_VERIFICATION")
        .execute();
      expect(row.every((r) => r.lane === null)).toBe(true);
    });
  });

  describe("with the check off (the default)", () => {
    let d: OperatingApp;
    beforeAll(async () => {
      d = await startOperatingApp(dialect);
    });
    afterAll(() => d?.close());

    it("sends at once to a new endpoint, not_required; verify still checks it on request", async () => {
      const receiver = await d.receiver();
      echoChallenges(receiver);
      const endpoint = await d.create({ url: receiver.url });
      expect(endpoint.verification).toBe("not_required");
      await d.emitUser("unchecked");
      const [first] = await receiver.waitForRequests(1);
      expect(envelopeOf(first!).event).toBe("ADMIN_USER_DISABLED");
      const moved = (
        await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { url: `${receiver.url}/x` })
      ).json();
      expect(moved.verification).toBe("not_required");

      expect((await d.api("POST", `/api/admin/webhooks/${endpoint.id}/verify`)).statusCode).toBe(
        202,
      );
      await waitFor(
        "verified",
        async () =>
          (await d.api("GET", `/api/admin/webhooks/${endpoint.id}`)).json().verification ===
          "verified",
      );
    });
  });
});
