import { HTTP, type CloudEvent } from "cloudevents";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { createRoom, postMessages } from "../../../../helpers/fixtures.js";
import { expectedSignature } from "../delivery-engine/delivery-fixture.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

const WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** What the official CloudEvents SDK reads from a request, validated as it validates. */
function readCloudEvent(request: { headers: Record<string, string>; body: Buffer }) {
  const event = HTTP.toEvent({
    headers: request.headers,
    body: request.body.toString("utf8"),
  }) as CloudEvent<Record<string, unknown>>;
  expect(event.validate()).toBe(true);
  return event;
}

describeEachDialect("CloudEvents payload formats on $name", (dialect) => {
  let d: OperatingApp;
  beforeAll(async () => {
    d = await startOperatingApp(dialect);
  });
  afterAll(() => d?.close());

  it("sends a room event in structured mode that the cloudevents SDK reads and validates, signed over the bytes sent", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({
      url: receiver.url,
      secret: WHSEC,
      events: ["MESSAGE_CREATED"],
      payloadFormat: "cloudevents",
      signatureScheme: "both",
    });
    expect(endpoint.payloadFormat).toBe("cloudevents");
    const room = await createRoom(d.t, d.t.admin, "ce-structured");
    const [messageId] = await postMessages(d.t, d.t.admin, room.id, 1, "hello CloudEvents");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers["content-type"]).toBe("application/cloudevents+json");
    const event = readCloudEvent(request!);
    expect(event.specversion).toBe("1.0");
    expect(event.type).toBe("io.parley.MESSAGE_CREATED");
    expect(event.source).toBe(`/rooms/${room.id}`);
    expect(event.subject).toBe(`messages/${messageId}`);
    expect(event.datacontenttype).toBe("application/json");
    expect(event.id).toBe(request!.headers["webhook-id"]);
    expect(event["webhookid"]).toBe(endpoint.id);
    expect(event.data).toMatchObject({ roomId: room.id, messageId });
    // Both schemes sign the CloudEvent's bytes, exactly as sent.
    expect(request!.headers["x-webhook-signature-256"]).toBe(
      expectedSignature(WHSEC, request!.body),
    );
    expect(() => new Webhook(WHSEC).verify(request!.body, request!.headers)).not.toThrow();
  });

  it("sends binary mode: the data as the body, the attributes as ce- headers, signed over that body", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({
      url: receiver.url,
      secret: WHSEC,
      events: ["MESSAGE_CREATED"],
      payloadFormat: "cloudevents-binary",
      signatureScheme: "standard-webhooks",
    });
    const room = await createRoom(d.t, d.t.admin, "ce-binary");
    const [messageId] = await postMessages(d.t, d.t.admin, room.id, 1, "binary mode");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["ce-specversion"]).toBe("1.0");
    expect(request!.headers["ce-webhookid"]).toBe(String(endpoint.id));
    const event = readCloudEvent(request!);
    expect(event.type).toBe("io.parley.MESSAGE_CREATED");
    expect(event.source).toBe(`/rooms/${room.id}`);
    expect(event.subject).toBe(`messages/${messageId}`);
    expect(event.id).toBe(request!.headers["webhook-id"]);
    expect(JSON.parse(request!.body.toString("utf8"))).toEqual(event.data);
    expect(event.data).toMatchObject({ roomId: room.id, messageId });
    expect(() => new Webhook(WHSEC).verify(request!.body, request!.headers)).not.toThrow();
  });

  it("gives an event without a room the source / and no subject", async () => {
    const receiver = await d.receiver();
    await d.create({ url: receiver.url, payloadFormat: "cloudevents" });
    await d.emitUser("no-room");
    const [request] = await receiver.waitForRequests(1);
    const event = readCloudEvent(request!);
    expect(event.source).toBe("/");
    expect(event.subject).toBeUndefined();
    expect(event.type).toBe("io.parley.ADMIN_USER_DISABLED");
    expect(event.data).toMatchObject({ username: "no-room" });
  });

  it("switches format by PATCH, keeps the default envelope byte for byte, and refuses an unknown format", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: receiver.url });
    expect(endpoint.payloadFormat).toBe("parley");
    await d.emitUser("plain");
    const [plain] = await receiver.waitForRequests(1);
    expect(JSON.parse(plain!.body.toString("utf8"))).toMatchObject({
      event: "ADMIN_USER_DISABLED",
      webhookId: endpoint.id,
      data: { username: "plain" },
    });
    const patched = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, {
      payloadFormat: "cloudevents-binary",
    });
    expect(patched.json().payloadFormat).toBe("cloudevents-binary");
    await d.emitUser("binary");
    const [, binary] = await receiver.waitForRequests(2);
    expect(readCloudEvent(binary!).data).toMatchObject({ username: "binary" });
    const bad = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, {
      payloadFormat: "xml",
    });
    expect(bad.statusCode).toBe(400);
  });

  it("shows each event type's sample in both CloudEvents modes, as the SDK reads them", async () => {
    const res = await d.api("GET", "/api/admin/webhooks/event-types");
    const items = res.json().items as Array<{
      name: string;
      sample: { data: unknown };
      samples: {
        cloudevents: Record<string, unknown>;
        cloudeventsBinary: { headers: Record<string, string>; body: unknown };
      };
    }>;
    expect(items.length).toBeGreaterThan(10);
    for (const item of items) {
      const structured = readCloudEvent({
        headers: { "content-type": "application/cloudevents+json" },
        body: Buffer.from(JSON.stringify(item.samples.cloudevents)),
      });
      const binary = readCloudEvent({
        headers: item.samples.cloudeventsBinary.headers,
        body: Buffer.from(JSON.stringify(item.samples.cloudeventsBinary.body)),
      });
      for (const event of [structured, binary]) {
        expect(event.type).toBe(`io.parley.${item.name}`);
        expect(event.data).toEqual(item.sample.data);
      }
    }
  });

  it("refuses custom headers named like CloudEvents attributes", async () => {
    const res = await d.api("POST", "/api/admin/webhooks", {
      name: "ce header",
      url: "http://127.0.0.1:9/hook",
      secret: WHSEC,
      events: ["ADMIN_USER_DISABLED"],
      headers: { "ce-type": "spoofed" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("header_reserved");
  });
});
