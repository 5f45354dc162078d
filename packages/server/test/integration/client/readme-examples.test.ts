// The examples of packages/client/README.md, run against a real server as written there (only the
// address, the token and the receiver's port differ).
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  RequestError,
  createWebhookHandler,
  paginate,
  parseWebhookEvent,
  request,
  verifyParleySignature,
  type WebhookEvent,
} from "@parley/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import { waitFor } from "../../helpers/wait-for.js";
import { startClientApp, type ClientApp } from "./client-app.js";

describe("the client README", () => {
  let c: ClientApp;
  let parley: typeof request;
  let receiver: Receiver;
  const secret = "whsec_cmVhZG1lLWV4YW1wbGUtc2VjcmV0LTAwMDE=";

  beforeAll(async () => {
    c = await startClientApp(SQLITE, { deliveries: true });
    receiver = await startReceiver();
    parley = request.defaults({
      baseUrl: c.baseUrl,
      headers: { authorization: `Bearer ${c.t.admin.token}` },
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await c?.close();
  });

  it("calls the API", async () => {
    const { data: room } = await parley("POST /api/rooms", { name: "deploys" });
    const { status, url, headers, data } = await parley("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "Deploy **finished**",
    });
    expect(status).toBe(201);
    expect(url).toBe(`${c.baseUrl}/api/rooms/${room.id}/messages`);
    expect(headers["content-type"]).toMatch(/^application\/json/);
    expect(data.content).toBe("Deploy **finished**");

    const { data: message } = await parley("GET /api/rooms/{roomId}/messages/{messageId}", {
      roomId: room.id,
      messageId: data.id,
      mediaType: { format: "full+json" },
    });
    expect(message.contentText).toBe("Deploy finished");

    const form = new FormData();
    form.set(
      "file",
      new Blob([Buffer.from("%PDF-1.4\n")], { type: "application/pdf" }),
      "report.pdf",
    );
    const { data: file } = await parley("POST /api/rooms/{roomId}/files", {
      roomId: room.id,
      data: form,
    });
    expect(file.fileName).toBe("report.pdf");
    await parley("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "Q3",
      fileIds: [file.id],
    });
    const { data: bytes } = await parley("GET /api/rooms/{roomId}/files/{fileId}", {
      roomId: room.id,
      fileId: file.id,
    });
    expect(Buffer.from(bytes).toString()).toBe("%PDF-1.4\n");
  });

  it("layers defaults and shows what would be sent", () => {
    const admin = parley.defaults({ headers: { "x-request-id": "deploy-42" } });
    expect(admin.endpoint("GET /api/admin/webhooks", { limit: 10 })).toMatchObject({
      method: "get",
      url: `${c.baseUrl}/api/admin/webhooks?limit=10`,
      headers: { "x-request-id": "deploy-42", authorization: `Bearer ${c.t.admin.token}` },
    });
  });

  it("creates a webhook with its body in data, paginates, and reports errors", async () => {
    const url = receiver.url;
    const events = ["MESSAGE_CREATED" as const];
    const { data: webhook } = await parley("POST /api/admin/webhooks", {
      data: { name: "ops", url, secret, events },
    });
    await parley("PATCH /api/admin/webhooks/{id}", { id: webhook.id, data: { enabled: false } });
    expect((await paginate.all(parley, "GET /api/admin/webhooks")).map((w) => w.enabled)).toContain(
      false,
    );
    await parley("PATCH /api/admin/webhooks/{id}", { id: webhook.id, data: { enabled: true } });

    let message = "";
    try {
      await parley("POST /api/admin/webhooks", {
        data: { name: "ops", url, secret: "short", events },
      });
    } catch (error) {
      if (error instanceof RequestError && error.code === "invalid_secret") message = error.message;
      else throw error;
    }
    expect(message).toMatch(
      new RegExp(`^POST ${c.baseUrl}/api/admin/webhooks answered 400 invalid_secret: .+`),
    );

    const pages = [];
    for await (const page of paginate(parley, "GET /api/admin/users", { limit: 200 }))
      pages.push(page);
    expect(pages.at(-1)!.nextCursor).toBeNull();
  });

  it("verifies and parses a real delivery, by hand and with createWebhookHandler", async () => {
    const { data: room } = await parley("POST /api/rooms", { name: "hooked" });
    await parley("POST /api/rooms/{roomId}/messages", { roomId: room.id, content: "ping" });
    const [delivery] = await receiver.waitForRequests(1);
    const rawBody = delivery!.body;
    expect(
      verifyParleySignature(secret, rawBody, delivery!.headers["x-webhook-signature-256"]),
    ).toBe(true);
    const event = parseWebhookEvent(rawBody);
    expect(event.event === "MESSAGE_CREATED" && event.data.roomId).toBe(room.id);

    const received: WebhookEvent[] = [];
    const handler = createWebhookHandler({
      secret,
      async onEvent(e) {
        received.push(e);
      },
    });
    const server = http.createServer(handler).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await parley("POST /api/admin/webhooks", {
        data: {
          name: "handler",
          url: `http://127.0.0.1:${port}/`,
          secret,
          events: ["ROOM_CREATED"],
        },
      });
      const { data: next } = await parley("POST /api/rooms", { name: "handled" });
      const got = await waitFor("the handler to get ROOM_CREATED", async () => received[0]);
      expect(got).toMatchObject({
        event: "ROOM_CREATED",
        data: { roomId: next.id, createdBy: "admin" },
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
