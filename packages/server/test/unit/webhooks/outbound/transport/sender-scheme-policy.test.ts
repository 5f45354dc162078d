import { afterEach, describe, expect, it } from "vitest";
import { createWebhookSender } from "../../../../../src/webhooks/outbound/transport/webhook-sender.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  cleanups.push(() => started.close());
  return started;
}

const delivery = (url: string) => ({ url, body: Buffer.from("{}"), signature: "sha256=00" });

describe("webhook sender: the http:// policy at every attempt", () => {
  it("refuses an http:// receiver when http is not allowed, says why, and sends nothing", async () => {
    const target = await receiver();
    const sender = createWebhookSender({
      timeoutMs: 2_000,
      allowPrivateNetworks: true,
      allowHttp: false,
    });
    cleanups.push(() => sender.close());
    const outcome = await sender.send(delivery(target.url));
    expect(outcome.ok).toBe(false);
    expect(outcome.responseStatus).toBeNull();
    expect(outcome.error).toMatch(
      /http:\/\/ receivers are not allowed \(PARLEY_WEBHOOK_ALLOW_HTTP/,
    );
    expect(target.requests).toHaveLength(0);
  });

  it("sends to the same receiver when http is allowed", async () => {
    const target = await receiver();
    const sender = createWebhookSender({
      timeoutMs: 2_000,
      allowPrivateNetworks: true,
      allowHttp: true,
    });
    cleanups.push(() => sender.close());
    expect((await sender.send(delivery(target.url))).ok).toBe(true);
    expect(target.requests).toHaveLength(1);
  });
});
