import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  parseWebhookEvent,
  signWebhookPayload,
  verifyParleySignature,
  WebhookSecretError,
} from "@parley/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signPayload } from "../../../src/webhooks/outbound/delivery-engine/sign-payload.js";
import { SQLITE } from "../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import { startClientApp, type ClientApp } from "./client-app.js";

interface Vector {
  description: string;
  secret: string;
  bodyBase64: string;
  header: string;
}

const vectors = JSON.parse(
  readFileSync(new URL("../../fixtures/signatures.json", import.meta.url), "utf8"),
) as Vector[];

describe("the client's verifier and the server's signer agree", () => {
  it.each(vectors.map((v) => [v.description, v] as const))(
    "on the shared known-answer vector: %s",
    (_description, vector) => {
      const body = Buffer.from(vector.bodyBase64, "base64");
      expect(signWebhookPayload(vector.secret, body)).toBe(vector.header);
      expect(signPayload(vector.secret, body)).toBe(vector.header);
      if (Buffer.byteLength(vector.secret) < 16) {
        // RFC 4231's "Jefe": a known answer for the HMAC, but no key a verifier may use.
        expect(() => verifyParleySignature(vector.secret, body, vector.header)).toThrow(
          WebhookSecretError,
        );
        return;
      }
      expect(verifyParleySignature(vector.secret, body, vector.header)).toBe(true);
      expect(verifyParleySignature(`${vector.secret}x`, body, vector.header)).toBe(false);
    },
  );

  it("has vectors to check", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(3);
  });
});

describe("a real delivery from a running server", () => {
  const secret = "whsec_cmVhbC1kZWxpdmVyeS12ZWN0b3ItMDA0Mg==";
  let c: ClientApp;
  let receiver: Receiver;
  beforeAll(async () => {
    c = await startClientApp(SQLITE, { deliveries: true });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await c?.close();
  });

  it("verifies with the client and with node:crypto, and parses to the typed event", async () => {
    await c.admin("POST /api/admin/webhooks", {
      data: { name: "vector", url: receiver.url, secret, events: ["MESSAGE_CREATED"] },
    });
    const { data: room } = await c.admin("POST /api/rooms", { name: "signed" });
    const { data: message } = await c.admin("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "sign this",
    });

    const [delivery] = await receiver.waitForRequests(1);
    const header = delivery!.headers["x-webhook-signature-256"]!;
    const independent = `sha256=${createHmac("sha256", Buffer.from(secret, "utf8")).update(delivery!.body).digest("hex")}`;
    expect(header).toBe(independent);
    expect(verifyParleySignature(secret, delivery!.body, header)).toBe(true);
    expect(verifyParleySignature(secret, delivery!.body.toString("utf8"), header)).toBe(true);
    expect(verifyParleySignature("whsec_some_other_secret_0", delivery!.body, header)).toBe(false);
    const tampered = Buffer.from(
      delivery!.body.toString("utf8").replace("MESSAGE_CREATED", "MESSAGE_CREATEd"),
    );
    expect(verifyParleySignature(secret, tampered, header)).toBe(false);

    const event = parseWebhookEvent(delivery!.body);
    if (event.event !== "MESSAGE_CREATED") throw new Error(`unexpected ${event.event}`);
    expect(event.data).toMatchObject({
      roomId: room.id,
      messageId: message.id,
      senderId: c.t.admin.id,
    });
    expect(delivery!.headers["user-agent"]).toBe("Parley-Webhooks/1.0");
  });
});
