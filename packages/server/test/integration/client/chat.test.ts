import { RequestError, paginate, type RequestInterface } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { startClientApp, type ClientApp } from "./client-app.js";

describeEachDialect("the client and the chat API on $name", (dialect) => {
  let c: ClientApp;
  let alice: TestUser;
  let bob: TestUser;
  let asAlice: RequestInterface;
  let asBob: RequestInterface;
  beforeAll(async () => {
    c = await startClientApp(dialect);
    // Scores by marker word, so the test decides what AI moderation does.
    c.t.ctx.safety.classifier = {
      name: "stub",
      async classify(text: string) {
        return text.includes("FLAG-ME")
          ? { category: "spam", score: 0.6 }
          : { category: "none", score: 0 };
      },
    };
    alice = await c.t.user("user", "c-alice");
    bob = await c.t.user("user", "c-bob");
    asAlice = c.as(alice);
    asBob = c.as(bob);
  });
  afterAll(async () => {
    await c?.close();
  });

  it("creates, lists, joins, leaves and deletes rooms", async () => {
    const { data: room, status } = await asAlice("POST /api/rooms", { name: "general" });
    expect(status).toBe(201);
    expect(room).toMatchObject({
      name: "general",
      kind: "room",
      createdBy: "c-alice",
      memberCount: 1,
    });

    const joined = await asBob("POST /api/rooms/{roomId}/join", { roomId: room.id });
    expect(joined.data.memberCount).toBe(2);
    const mine = await paginate.all(asBob, "GET /api/rooms");
    expect(mine.map((r) => r.id)).toContain(room.id);
    expect((await asBob("GET /api/rooms/{roomId}", { roomId: room.id })).data.name).toBe("general");

    const left = await asBob("POST /api/rooms/{roomId}/leave", { roomId: room.id });
    expect(left.status).toBe(204);
    const notCreator = (await asBob("DELETE /api/rooms/{roomId}", { roomId: room.id }).catch(
      (e: unknown) => e,
    )) as RequestError;
    expect(notCreator).toBeInstanceOf(RequestError);
    expect(notCreator.status).toBe(403);
    expect((await asAlice("DELETE /api/rooms/{roomId}", { roomId: room.id })).status).toBe(204);

    const other = await asAlice("POST /api/rooms", { name: "to be removed by an admin" });
    const removed = await c.admin("DELETE /api/admin/rooms/{roomId}", { roomId: other.data.id });
    expect(removed.status).toBe(204);
  });

  it("opens a direct message and promotes it to a room", async () => {
    const dm = await asAlice("POST /api/dms", { userId: bob.id });
    expect(dm.status).toBe(201);
    expect(dm.data).toMatchObject({ kind: "dm", name: null });
    expect((await asAlice("POST /api/dms", { userId: bob.id })).status).toBe(200);
    const promoted = await asBob("POST /api/dms/{dmId}/promote", {
      dmId: dm.data.id,
      name: "pair",
    });
    expect(promoted.data).toMatchObject({ id: dm.data.id, kind: "room", name: "pair" });
  });

  it("posts messages, pages through them and fetches one in every representation", async () => {
    const { data: room } = await asAlice("POST /api/rooms", { name: "chatter" });
    const posted = [];
    for (let i = 0; i < 5; i++) {
      const { data } = await asAlice("POST /api/rooms/{roomId}/messages", {
        roomId: room.id,
        content: `**hello** ${i}`,
      });
      posted.push(data);
    }
    expect(posted[0]).toMatchObject({
      roomId: room.id,
      contentFormat: "markdown",
      sender: { type: "user", id: alice.id, username: "c-alice" },
      moderationStatus: "none",
    });

    const pages = [];
    for await (const page of paginate(asAlice, "GET /api/rooms/{roomId}/messages", {
      roomId: room.id,
      limit: 2,
    })) {
      pages.push(page.items.length);
    }
    expect(pages).toEqual([2, 2, 1]);
    const ids = (
      await paginate.all(asAlice, "GET /api/rooms/{roomId}/messages", { roomId: room.id, limit: 2 })
    ).map((m) => m.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(posted.map((m) => m.id));

    const plain = await c.admin("GET /api/rooms/{roomId}/messages/{messageId}", {
      roomId: room.id,
      messageId: posted[0]!.id,
    });
    expect(plain.data.content).toBe("**hello** 0");
    expect(plain.data.contentHtml).toBeUndefined();
    const full = await c.admin("GET /api/rooms/{roomId}/messages/{messageId}", {
      roomId: room.id,
      messageId: posted[0]!.id,
      mediaType: { format: "full+json" },
    });
    expect(full.data.contentText).toBe("hello 0");
    expect(full.data.contentHtml).toContain("<strong>hello</strong>");
    expect(full.data.contentRaw).toBe("**hello** 0");
    expect(full.headers["x-parley-media-type"]).toContain("full");

    const notMember = (await asBob("GET /api/rooms/{roomId}/messages", { roomId: room.id }).catch(
      (e: unknown) => e,
    )) as RequestError;
    expect(notMember.status).toBe(403);
    expect(notMember.code).toBe("not_a_member");
  });

  it("answers 422 dlp_blocked with the rule, and 400 for empty content", async () => {
    const { data: room } = await asAlice("POST /api/rooms", { name: "secrets" });
    const blocked = (await asAlice("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "card 4111 1111 1111 1111",
    }).catch((e: unknown) => e)) as RequestError;
    expect(blocked.status).toBe(422);
    expect(blocked.code).toBe("dlp_blocked");
    const empty = (await asAlice("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "",
    }).catch((e: unknown) => e)) as RequestError;
    expect(empty.code).toBe("content_required");
  });

  it("uploads a file as multipart FormData", async () => {
    const { data: room } = await asAlice("POST /api/rooms", { name: "files" });
    const form = new FormData();
    form.set("file", new Blob(["hello, parley\n"], { type: "text/plain" }), "notes.txt");
    const uploaded = await asAlice("POST /api/rooms/{roomId}/files", {
      roomId: room.id,
      data: form,
    });
    expect(uploaded.status).toBe(201);
    expect(uploaded.data).toMatchObject({
      roomId: room.id,
      fileName: "notes.txt",
      fileSize: 14,
      uploadedBy: "c-alice",
    });
    expect(uploaded.data.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("posts a file with a message and downloads its bytes as an ArrayBuffer", async () => {
    const { data: room } = await asAlice("POST /api/rooms", { name: "shared files" });
    await asBob("POST /api/rooms/{roomId}/join", { roomId: room.id });
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    const form = new FormData();
    form.set("file", new Blob([bytes], { type: "image/png" }), "tiny.png");
    const { data: file } = await asAlice("POST /api/rooms/{roomId}/files", {
      roomId: room.id,
      data: form,
    });
    const { data: message } = await asAlice("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "a picture",
      fileIds: [file.id],
    });
    expect(message.files).toEqual([
      { id: file.id, name: "tiny.png", size: bytes.length, mediaType: "image/png" },
    ]);
    const got = await asBob("GET /api/rooms/{roomId}/files/{fileId}", {
      roomId: room.id,
      fileId: file.id,
    });
    expect(got.headers["content-type"]).toBe("image/png");
    expect(new Uint8Array(got.data)).toEqual(bytes);
  });

  it("lists moderation flags and approves one", async () => {
    const { data: room } = await asAlice("POST /api/rooms", { name: "moderated" });
    const { data: message } = await asAlice("POST /api/rooms/{roomId}/messages", {
      roomId: room.id,
      content: "buy now FLAG-ME",
    });
    expect(message.moderationStatus).toBe("FLAGGED");
    const pending = await paginate.all(c.admin, "GET /api/admin/moderation/flags", {
      status: "pending",
    });
    const flag = pending.find((f) => f.messageId === message.id)!;
    expect(flag).toMatchObject({ roomId: room.id, band: "low", status: "FLAGGED" });
    const approved = await c.admin("POST /api/admin/moderation/flags/{id}/approve", {
      id: flag.id,
    });
    expect(approved.data).toMatchObject({
      id: flag.id,
      reviewStatus: "approved",
      reviewedBy: "admin",
    });
  });
});
