import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect } from "../../../helpers/dialects.js";
import { createRoom } from "../../../helpers/fixtures.js";
import { post, recordEvents } from "../../chat/chat-helpers.js";
import { createWebhook, ingest, ingestPath, unknownToken } from "./inbound-helpers.js";

const VISA_TEST_CARD = "4111 1111 1111 1111";

describeEachDialect("a webhook's own messages through ingest on $name", (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
  });
  afterAll(async () => {
    await t.close();
  });

  const posted = async (token: string, content = "build #1 running") => {
    const res = await ingest(t, token, { content });
    expect(res.statusCode).toBe(200);
    return res.json().messageId as number;
  };
  const patch = (token: string, messageId: number, payload: unknown) =>
    t.app.inject({
      method: "PATCH",
      url: `${ingestPath(token)}/messages/${messageId}`,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify(payload),
    });
  const remove = (token: string, messageId: number) =>
    t.app.inject({ method: "DELETE", url: `${ingestPath(token)}/messages/${messageId}` });
  const stored = (messageId: number) =>
    t.ctx.db
      .selectFrom("messages")
      .select(["content", "revision", "deleted_at"])
      .where("id", "=", messageId)
      .executeTakeFirstOrThrow();

  describe("PATCH .../ingest/{token}/messages/{messageId}", () => {
    it("edits the webhook's message: 200 {messageId, revision, editedAt}, a revision, MESSAGE_UPDATED", async () => {
      const hook = await createWebhook(t, { displayName: "CI" });
      const id = await posted(hook.token);
      const seen = recordEvents(t);
      const res = await patch(hook.token, id, { content: "build #1 **passed**" });
      seen.stop();
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual({ messageId: id, revision: 2, editedAt: expect.any(String) });
      expect(await stored(id)).toMatchObject({ content: "build #1 **passed**", revision: 2 });
      expect(seen.events).toEqual([
        [
          "MESSAGE_UPDATED",
          {
            roomId: hook.roomId,
            messageId: id,
            revision: 2,
            editedBy: "CI",
            editedAt: body.editedAt,
            mentions: [],
          },
        ],
      ]);
    });

    it("answers the same content with 200 and fires nothing", async () => {
      const hook = await createWebhook(t);
      const id = await posted(hook.token, "same");
      const seen = recordEvents(t);
      const res = await patch(hook.token, id, { content: "same" });
      seen.stop();
      expect(res.statusCode).toBe(200);
      expect(res.json().revision).toBe(1);
      expect(seen.events).toEqual([]);
    });

    it("goes through DLP and the content rules as a post does", async () => {
      const hook = await createWebhook(t);
      const id = await posted(hook.token);
      const blocked = await patch(hook.token, id, { content: `card ${VISA_TEST_CARD}` });
      expect(blocked.statusCode).toBe(422);
      expect(blocked.json().code).toBe("dlp_blocked");
      const empty = await patch(hook.token, id, { content: "" });
      expect(empty.statusCode).toBe(400);
      expect(empty.json().code).toBe("content_required");
      expect(await stored(id)).toMatchObject({ content: "build #1 running", revision: 1 });
    });

    it("answers 404 not_found, as an unknown token, for another webhook's or a user's message", async () => {
      const hook = await createWebhook(t);
      const other = await createWebhook(t, { roomId: hook.roomId });
      const theirs = await posted(other.token);
      const userMessage = (await post(t, t.admin, hook.roomId, "mine")).json().id as number;
      const unknown = await patch(unknownToken(), theirs, { content: "x" });
      for (const id of [theirs, userMessage, 999_999_999]) {
        const res = await patch(hook.token, id, { content: "taken over" });
        expect(res.statusCode, String(id)).toBe(404);
        expect(res.json()).toEqual(unknown.json());
      }
      expect(await stored(theirs)).toMatchObject({ content: "build #1 running" });
    });

    it("answers 404 for its own message after the token was rotated", async () => {
      const hook = await createWebhook(t);
      const id = await posted(hook.token);
      const rotated = await t.app.inject({
        method: "POST",
        url: `/api/admin/inbound-webhooks/${hook.id}/rotate-token`,
        headers: t.admin.headers,
      });
      expect(rotated.statusCode).toBe(200);
      expect((await patch(hook.token, id, { content: "late" })).statusCode).toBe(404);
      expect((await patch(rotated.json().token, id, { content: "new token" })).statusCode).toBe(
        200,
      );
    });
  });

  describe("DELETE .../ingest/{token}/messages/{messageId}", () => {
    it("deletes the webhook's message: 204, content erased, MESSAGE_DELETED; then 410", async () => {
      const hook = await createWebhook(t, { displayName: "CI" });
      const id = await posted(hook.token);
      const seen = recordEvents(t);
      const res = await remove(hook.token, id);
      seen.stop();
      expect(res.statusCode).toBe(204);
      expect(await stored(id)).toMatchObject({ content: "", deleted_at: expect.anything() });
      expect(seen.events).toEqual([
        [
          "MESSAGE_DELETED",
          {
            roomId: hook.roomId,
            messageId: id,
            deletedBy: "CI",
            deletedAt: expect.any(String),
            threadId: null,
          },
        ],
      ]);
      const again = await remove(hook.token, id);
      expect(again.statusCode).toBe(410);
      expect(again.json().code).toBe("message_deleted");
      expect((await patch(hook.token, id, { content: "back" })).statusCode).toBe(410);
    });

    it("answers 404 for another webhook's or a user's message and deletes nothing", async () => {
      const roomId = (await createRoom(t)).id;
      const hook = await createWebhook(t, { roomId });
      const other = await createWebhook(t, { roomId });
      const theirs = await posted(other.token);
      const userMessage = (await post(t, t.admin, roomId, "mine")).json().id as number;
      for (const id of [theirs, userMessage]) {
        const res = await remove(hook.token, id);
        expect(res.statusCode).toBe(404);
        expect(res.json().code).toBe("not_found");
        expect((await stored(id)).deleted_at).toBeNull();
      }
      expect((await remove(unknownToken(), theirs)).statusCode).toBe(404);
    });
  });
});
