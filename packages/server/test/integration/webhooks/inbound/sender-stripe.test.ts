import type { InboundWebhookWithToken } from "@parley/client";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect } from "../../../helpers/dialects.js";
import { createWebhook, ingestPath, messagesOf } from "./inbound-helpers.js";

const SECRET = "whsec_test_5fJ3kQ9mZr2Lp7Vn8Bc4";
let events = 0;

/** A Stripe event object as Stripe sends it (the fields the message uses, and the envelope). */
function stripeEvent(
  type: string,
  object: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    id: `evt_test_${String(++events).padStart(6, "0")}`,
    object: "event",
    api_version: "2024-06-20",
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
    ...extra,
  };
}

describeEachDialect("Stripe events on $name", (dialect) => {
  let t: TestApp;
  let signed: InboundWebhookWithToken;
  let unsigned: InboundWebhookWithToken;

  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
    signed = await createWebhook(t, { displayName: "Stripe", signingSecret: SECRET });
    unsigned = await createWebhook(t, { displayName: "Stripe (unsigned)" });
  });
  afterAll(async () => {
    await t.close();
  });

  /** Sends the event as Stripe does, signed by the stripe package's own test-header helper. */
  async function send(
    event: unknown,
    options: { hook?: InboundWebhookWithToken; signature?: string; timestamp?: number } = {},
  ) {
    const payload = JSON.stringify(event);
    const signature =
      options.signature ??
      Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: SECRET,
        ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
      });
    return t.app.inject({
      method: "POST",
      url: `${ingestPath((options.hook ?? signed).token)}/stripe`,
      headers: {
        "content-type": "application/json; charset=utf-8",
        "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
        ...(signature === "" ? {} : { "stripe-signature": signature }),
      },
      payload,
    });
  }

  const lastContent = async (hook = signed) => (await messagesOf(t, hook.roomId)).at(-1)!.content;

  it.each([
    [
      "payment_intent.succeeded",
      {
        id: "pi_3Q1",
        object: "payment_intent",
        amount: 1234,
        amount_received: 1234,
        currency: "eur",
        receipt_email: "ada@example.com",
      },
      "Payment of **12.34 EUR** succeeded for ada@example.com: [pi\\_3Q1](https://dashboard.stripe.com/test/payments/pi_3Q1)",
    ],
    [
      "payment_intent.payment_failed",
      {
        id: "pi_3Q2",
        amount: 500,
        currency: "usd",
        last_payment_error: { message: "Your card was declined." },
      },
      "Payment of **5.00 USD** failed: [pi\\_3Q2](https://dashboard.stripe.com/test/payments/pi_3Q2)\nYour card was declined.",
    ],
    [
      "charge.refunded",
      {
        id: "ch_3Q3",
        amount: 1000,
        amount_refunded: 250,
        currency: "gbp",
        payment_intent: "pi_3Q3",
      },
      "Refunded **2.50 GBP** of **10.00 GBP**: [ch\\_3Q3](https://dashboard.stripe.com/test/payments/pi_3Q3)",
    ],
    [
      "charge.dispute.created",
      { id: "dp_1", amount: 1500, currency: "jpy", reason: "product_not_received" },
      "Dispute opened for **1500 JPY** (product not received): [dp\\_1](https://dashboard.stripe.com/test/disputes/dp_1)",
    ],
    [
      "checkout.session.completed",
      {
        id: "cs_test_1",
        amount_total: 4200,
        currency: "chf",
        payment_intent: "pi_9",
        customer_details: { email: "bo@example.com" },
      },
      "Checkout completed: **42.00 CHF** for bo@example.com ([cs\\_test\\_1](https://dashboard.stripe.com/test/payments/pi_9))",
    ],
    [
      "invoice.paid",
      {
        id: "in_1",
        number: "A1B2-0001",
        amount_paid: 9900,
        currency: "eur",
        customer_email: "cy@example.com",
        hosted_invoice_url: "https://invoice.stripe.com/i/acct_1/inv_1",
      },
      "Invoice [A1B2-0001](https://invoice.stripe.com/i/acct_1/inv_1) paid: **99.00 EUR** for cy@example.com",
    ],
    [
      "invoice.payment_failed",
      { id: "in_2", number: "A1B2-0002", amount_due: 1234, currency: "kwd" },
      "Invoice [A1B2-0002](https://dashboard.stripe.com/test/invoices/in_2) payment failed: **1.234 KWD** due",
    ],
    [
      "customer.subscription.created",
      {
        id: "sub_1",
        customer: "cus_1",
        items: {
          data: [
            { price: { unit_amount: 1200, currency: "eur", recurring: { interval: "month" } } },
          ],
        },
      },
      "Subscription [sub\\_1](https://dashboard.stripe.com/test/subscriptions/sub_1) created: **12.00 EUR** per month for customer cus\\_1",
    ],
    [
      "customer.subscription.deleted",
      { id: "sub_2", customer: "cus_2" },
      "Subscription [sub\\_2](https://dashboard.stripe.com/test/subscriptions/sub_2) canceled for customer cus\\_2",
    ],
  ])("posts %s in words with its amount", async (type, object, expected) => {
    const res = await send(stripeEvent(type, object));
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(["messageId", "timestamp"]);
    expect(await lastContent()).toBe(expected);
  });

  it("links live-mode events to the live dashboard", async () => {
    await send(
      stripeEvent(
        "payment_intent.succeeded",
        { id: "pi_live", amount: 100, currency: "usd" },
        { livemode: true },
      ),
    );
    expect(await lastContent()).toContain("(https://dashboard.stripe.com/payments/pi_live)");
  });

  it("posts any other type as one line with its id", async () => {
    const event = stripeEvent("customer.created", { id: "cus_9" });
    expect((await send(event)).statusCode).toBe(200);
    expect(await lastContent()).toBe(
      `Stripe event customer.created (${event.id.replace(/_/g, "\\_")})`,
    );
  });

  it("answers a repeated event id with the first answer and posts once, even re-signed later", async () => {
    const event = stripeEvent("invoice.paid", { id: "in_r", amount_paid: 100, currency: "eur" });
    const before = (await messagesOf(t, signed.roomId)).length;
    const first = await send(event);
    const again = await send(event, { timestamp: Math.floor(Date.now() / 1000) - 60 });
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toBe(first.body);
    expect((await messagesOf(t, signed.roomId)).length).toBe(before + 1);
  });

  describe("signatures", () => {
    it("accepts a timestamp 290 s old and refuses one 310 s old (or ahead) with 401", async () => {
      const now = Math.floor(Date.now() / 1000);
      const fresh = await send(stripeEvent("customer.created", { id: "cus_a" }), {
        timestamp: now - 290,
      });
      expect(fresh.statusCode).toBe(200);
      for (const timestamp of [now - 310, now + 310]) {
        const stale = await send(stripeEvent("customer.created", { id: "cus_b" }), { timestamp });
        expect(stale.statusCode).toBe(401);
        expect(stale.json()).toMatchObject({ code: "invalid_signature" });
      }
    });

    it("refuses a missing signature, another secret's, and one over other bytes, posting nothing", async () => {
      const before = (await messagesOf(t, signed.roomId)).length;
      const event = stripeEvent("customer.created", { id: "cus_c" });
      const payload = JSON.stringify(event);
      const other = Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: "whsec_other_0123456789",
      });
      const tampered = Stripe.webhooks.generateTestHeaderString({
        payload: JSON.stringify({ ...event, type: "invoice.paid" }),
        secret: SECRET,
      });
      for (const signature of ["", other, tampered, "t=1,v1=zz", "v1=abc"]) {
        const res = await send(event, { signature });
        expect(res.statusCode).toBe(401);
        expect(res.body).not.toContain(SECRET);
      }
      expect((await messagesOf(t, signed.roomId)).length).toBe(before);
    });

    it("accepts a header with two v1 signatures when one matches (a secret being rolled)", async () => {
      const event = stripeEvent("customer.created", { id: "cus_d" });
      const payload = JSON.stringify(event);
      const good = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
      const [timestamp, v1] = good.split(",");
      const res = await send(event, { signature: `${timestamp},v1=${"0".repeat(64)},${v1}` });
      expect(res.statusCode).toBe(200);
    });

    it("accepts unsigned events when the webhook has no signing secret", async () => {
      const res = await send(stripeEvent("customer.created", { id: "cus_e" }), {
        hook: unsigned,
        signature: "",
      });
      expect(res.statusCode).toBe(200);
    });
  });

  it("refuses a body that is not a Stripe event (no id or type) with 400", async () => {
    const res = await send({ hello: "world" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "validation_failed" });
  });
});
