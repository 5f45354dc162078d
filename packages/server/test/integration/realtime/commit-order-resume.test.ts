/**
 * On PostgreSQL message ids are drawn before commit, so two posts into one room can commit in the
 * opposite order of their ids. Resume (`after` = the last message received) must still give every
 * message exactly once. Only PostgreSQL can interleave two writers (SQLite has one at a time).
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventData } from "../../../src/events/event-catalogue.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { POSTGRES } from "../../helpers/dialects.js";
import { openAuthenticated, subscribe, type Frame } from "../../helpers/stream-socket.js";

describe("resume across messages committed out of id order", { tags: ["postgres"] }, () => {
  let t: TestApp;
  let origin: string;
  let fay: TestUser;
  let roomId: number;

  beforeAll(async () => {
    t = await createTestApp(POSTGRES);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    fay = await t.user("user", "fay");
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: fay.headers,
      payload: { name: "order" },
    });
    roomId = room.json().id;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Starts a post whose transaction commits only when `commit()` is called. */
  async function heldPost(content: string) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let announce!: (id: number) => void;
    const inserted = new Promise<number>((resolve) => (announce = resolve));
    const done = t.ctx.database.transaction(async (tx) => {
      const now = Date.now();
      const row = await tx.db
        .insertInto("messages")
        .values({
          room_id: roomId,
          sender_user_id: fay.id,
          inbound_webhook_id: null,
          sender_display_name: "fay",
          sender_avatar_url: null,
          content,
          content_format: "markdown",
          moderation_status: "none",
          created_at: now,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      await tx.emit(
        "MESSAGE_CREATED",
        eventData.messageCreated({
          roomId,
          messageId: row.id,
          senderId: fay.id,
          createdAt: now,
          threadId: null,
          mentions: [],
        }),
      );
      announce(row.id);
      await gate;
    });
    return { id: await inserted, commit: () => (release(), done) };
  }

  const ids = (frames: Frame[]) =>
    frames.filter((f) => f.event === "MESSAGE_CREATED").map((f) => f.data.messageId as number);

  it("replays a smaller id that committed after the client's last message", async () => {
    const first = await openAuthenticated(origin, fay.token);
    await subscribe(first, roomId);
    const older = await heldPost("drawn first, committed second");
    const newer = await heldPost("drawn second, committed first");
    expect(older.id).toBeLessThan(newer.id);
    await newer.commit();
    await first.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === newer.id);
    await first.close();
    await older.commit();

    const second = await openAuthenticated(origin, fay.token);
    await subscribe(second, roomId, newer.id);
    const marker = await heldPost("marker");
    await marker.commit();
    await second.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === marker.id);
    expect(ids(second.frames)).toEqual([older.id, marker.id]);
    await second.close();
  });

  it("does not repeat a larger id the client received before its last message", async () => {
    const first = await openAuthenticated(origin, fay.token);
    await subscribe(first, roomId);
    const older = await heldPost("drawn first, committed second");
    const newer = await heldPost("drawn second, committed first");
    await newer.commit();
    await older.commit();
    await first.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === older.id);
    expect(ids(first.frames)).toEqual([newer.id, older.id]);
    await first.close();

    const second = await openAuthenticated(origin, fay.token);
    // The last message received is `older` (smaller id): `newer` must not come again.
    await subscribe(second, roomId, older.id);
    const marker = await heldPost("marker");
    await marker.commit();
    await second.next((f) => f.event === "MESSAGE_CREATED" && f.data.messageId === marker.id);
    expect(ids(second.frames)).toEqual([marker.id]);
    await second.close();
  });
});
