import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadFullMessage, messagesAfter } from "../../../src/realtime/message-frames.js";
import type { ModerationClassifier } from "../../../src/safety/moderation/moderation-classifier.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { joinRoom, recordEvents } from "./chat-helpers.js";
import { fileField, upload } from "./file-helpers.js";
import { PASSWORD, signIn } from "../auth/sign-in-helpers.js";
import { setUserPassword } from "../../../src/auth/sign-in-service.js";

const EICAR = "X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";
/** A 1x1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);

/** Quarantines what says QUARANTINE, so a test decides the outcome. */
const stubClassifier: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    return text.includes("QUARANTINE")
      ? { category: "harassment", score: 0.95 }
      : { category: "none", score: 0 };
  },
};

describeEachDialect("files in the conversation on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let stranger: TestUser;
  let roomId: number;
  let otherRoomId: number;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.ctx.safety.classifier = stubClassifier;
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    stranger = await t.user("user", "stranger");
    roomId = (await createRoom(t, alice, "files")).id;
    await joinRoom(t, bob, roomId);
    otherRoomId = (await createRoom(t, alice, "elsewhere")).id;
  });
  afterAll(async () => {
    await t.close();
  });

  async function uploaded(
    user: TestUser,
    data: string | Buffer,
    name = "notes.txt",
    type = "text/plain",
    room = roomId,
  ): Promise<number> {
    const res = await upload(t, user, room, [fileField(data, name, type)]);
    expect(res.statusCode).toBe(201);
    return res.json<{ id: number }>().id;
  }

  const download = (user: TestUser | undefined, fileId: number, room = roomId, extra = {}) =>
    t.app.inject({
      method: "GET",
      url: `/api/rooms/${room}/files/${fileId}`,
      headers: { ...(user ? user.headers : {}), ...extra },
    });

  const postWith = (user: TestUser, body: Record<string, unknown>, room = roomId) =>
    t.app.inject({
      method: "POST",
      url: `/api/rooms/${room}/messages`,
      headers: user.headers,
      payload: body,
    });

  const storageKey = async (fileId: number) =>
    (
      await t.ctx.db
        .selectFrom("files")
        .select("storage_key")
        .where("id", "=", fileId)
        .executeTakeFirstOrThrow()
    ).storage_key;

  it("posts a message carrying its author's files, listed as {id, name, size, mediaType} wherever the message is shown", async () => {
    const report = await uploaded(alice, "quarterly numbers\n", "report.txt", "text/plain");
    const chart = await uploaded(alice, PNG, "chart.png", "image/png");
    const seen = recordEvents(t);
    const res = await postWith(alice, { content: "the numbers", fileIds: [chart, report] });
    seen.stop();
    expect(res.statusCode).toBe(201);
    const files = [
      { id: report, name: "report.txt", size: 18, mediaType: "text/plain" },
      { id: chart, name: "chart.png", size: PNG.length, mediaType: "image/png" },
    ];
    const message = res.json();
    expect(message.files).toEqual(files);
    // The event's payload is unchanged: no files, no content.
    const [[event, data]] = seen.events as [[string, Record<string, unknown>]];
    expect(event).toBe("MESSAGE_CREATED");
    expect(Object.keys(data).sort()).toEqual([
      "mentions",
      "messageId",
      "roomId",
      "senderId",
      "threadId",
      "timestamp",
    ]);

    const list = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages`,
      headers: bob.headers,
    });
    expect(list.json().items.find((item: { id: number }) => item.id === message.id).files).toEqual(
      files,
    );
    const fetched = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/messages/${message.id}`,
      headers: t.admin.headers,
    });
    expect(fetched.json().files).toEqual(files);
    // The live stream's MESSAGE_CREATED frame carries the message object as the fetch does.
    expect((await loadFullMessage(t.ctx.db, message.id))?.files).toEqual(files);
    // And so do the frames a resume sends.
    const resumed = await messagesAfter(t.ctx.db, roomId, message.id - 1, 10);
    expect(resumed.find((item) => item.messageId === message.id)?.data().message.files).toEqual(
      files,
    );
    // A message without files lists none.
    const plain = await postWith(alice, { content: "no files" });
    expect(plain.json().files).toEqual([]);
  });

  it("serves a posted file to every member, as an attachment of type octet-stream, inert, under its exact name", async () => {
    const name = "Résumé final 100%.html";
    const html = "<script>alert(document.cookie)</script>";
    const fileId = await uploaded(alice, html, name, "text/html");
    expect((await postWith(alice, { content: "cv", fileIds: [fileId] })).statusCode).toBe(201);
    for (const user of [alice, bob]) {
      const res = await download(user, fileId);
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(html);
      expect(res.headers["content-type"]).toBe("application/octet-stream");
      expect(res.headers["content-disposition"]).toBe(
        `attachment; filename="R_sum_ final 100_.html"; filename*=UTF-8''R%C3%A9sum%C3%A9%20final%20100%25.html`,
      );
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["content-security-policy"]).toMatch(/^sandbox; default-src 'none'/);
      expect(res.headers["content-length"]).toBe(String(html.length));
      expect(res.headers["cache-control"]).toBe("private, no-cache");
    }
  });

  it("serves PNG, JPEG, GIF and WebP images inline under their type and a sandbox policy, and SVG as an attachment", async () => {
    for (const type of ["image/png", "image/jpeg", "image/gif", "image/webp"]) {
      const fileId = await uploaded(alice, PNG, "picture", type);
      await postWith(alice, { content: type, fileIds: [fileId] });
      const res = await download(bob, fileId);
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload).toEqual(PNG);
      expect(res.headers["content-type"]).toBe(type);
      expect(res.headers["content-disposition"]).toBe(
        `inline; filename="picture"; filename*=UTF-8''picture`,
      );
      expect(res.headers["content-security-policy"]).toMatch(/^sandbox; default-src 'none'; /);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
    }
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>';
    const svgId = await uploaded(alice, svg, "logo.svg", "image/svg+xml");
    await postWith(alice, { content: "logo", fileIds: [svgId] });
    const res = await download(bob, svgId);
    expect(res.headers["content-type"]).toBe("application/octet-stream");
    expect(res.headers["content-disposition"]).toMatch(/^attachment; /);
    expect(res.headers["content-security-policy"]).toBe(
      "sandbox; default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
  });

  it("answers 304 to If-None-Match with the file's ETag (its SHA-256), and 200 to another tag", async () => {
    const fileId = await uploaded(alice, "same bytes");
    await postWith(alice, { content: "etag", fileIds: [fileId] });
    const first = await download(bob, fileId);
    const etag = first.headers.etag as string;
    const sha256 = (
      await t.ctx.db
        .selectFrom("files")
        .select("sha256")
        .where("id", "=", fileId)
        .executeTakeFirstOrThrow()
    ).sha256;
    expect(etag).toBe(`"${sha256}"`);
    const again = await download(bob, fileId, roomId, { "if-none-match": etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe("");
    expect(again.headers.etag).toBe(etag);
    const other = await download(bob, fileId, roomId, { "if-none-match": '"other"' });
    expect(other.statusCode).toBe(200);
    expect(other.body).toBe("same bytes");
  });

  it("answers HEAD with the download's headers, without reading the bytes from the storage", async () => {
    const fileId = await uploaded(alice, "head only", "head.txt");
    await postWith(alice, { content: "head", fileIds: [fileId] });
    const open = t.ctx.files.open;
    let opened = 0;
    t.ctx.files.open = async (key) => {
      opened++;
      return open(key);
    };
    try {
      const res = await t.app.inject({
        method: "HEAD",
        url: `/api/rooms/${roomId}/files/${fileId}`,
        headers: bob.headers,
      });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe("");
      expect(res.headers["content-length"]).toBe("9");
      expect(res.headers["content-disposition"]).toMatch(/^attachment; filename="head.txt"/);
      expect(opened).toBe(0);
      expect((await download(bob, fileId)).body).toBe("head only");
      expect(opened).toBe(1);
    } finally {
      t.ctx.files.open = open;
    }
  });

  it("serves a signed-in browser with its session cookie alone, as an <img> or a link sends it", async () => {
    const fileId = await uploaded(alice, PNG, "preview.png", "image/png");
    await postWith(alice, { content: "preview", fileIds: [fileId] });
    await setUserPassword(t.ctx, bob.username, PASSWORD);
    const browser = await signIn(t, bob.username);
    const res = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/files/${fileId}`,
      headers: { cookie: browser.cookie },
    });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload).toEqual(PNG);
    expect(res.headers["content-disposition"]).toMatch(/^inline; /);
  });

  it("serves a file no message carries yet to its uploader only", async () => {
    const fileId = await uploaded(alice, "draft");
    expect((await download(alice, fileId)).body).toBe("draft");
    const toBob = await download(bob, fileId);
    expect(toBob.statusCode).toBe(404);
    expect(toBob.json().code).toBe("file_not_found");
    expect((await download(t.admin, fileId)).statusCode).toBe(404);
  });

  it("keeps files from non-members (403), from another room's path (404) and from anonymous callers (401)", async () => {
    const fileId = await uploaded(alice, "members only");
    await postWith(alice, { content: "private", fileIds: [fileId] });
    const outsider = await download(stranger, fileId);
    expect(outsider.statusCode).toBe(403);
    expect(outsider.json().code).toBe("not_a_member");
    // The same file asked for through another room alice is a member of: not there.
    const elsewhere = await download(alice, fileId, otherRoomId);
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json().code).toBe("file_not_found");
    expect((await download(alice, 999999)).json().code).toBe("file_not_found");
    expect((await download(undefined, fileId)).statusCode).toBe(401);
    const bad = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/files/abc`,
      headers: alice.headers,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: "validation_failed", field: "params.fileId" });
  });

  it("serves a direct message's files to its two members only, not to an admin", async () => {
    const dm = await t.app.inject({
      method: "POST",
      url: "/api/dms",
      headers: alice.headers,
      payload: { userId: bob.id },
    });
    const dmId = dm.json<{ id: number }>().id;
    const fileId = await uploaded(alice, "between us", "secret.txt", "text/plain", dmId);
    expect((await postWith(alice, { content: "dm", fileIds: [fileId] }, dmId)).statusCode).toBe(
      201,
    );
    expect((await download(bob, fileId, dmId)).body).toBe("between us");
    expect((await download(t.admin, fileId, dmId)).statusCode).toBe(403);
    expect((await download(stranger, fileId, dmId)).statusCode).toBe(403);
  });

  it("never serves the files of a quarantined message, to anyone, until an admin approves it", async () => {
    const fileId = await uploaded(alice, "held", "held.txt");
    const res = await postWith(alice, { content: "QUARANTINE this", fileIds: [fileId] });
    expect(res.statusCode).toBe(201);
    expect(res.json().moderationStatus).toBe("QUARANTINED");
    for (const user of [alice, bob, t.admin]) {
      const held = await download(user, fileId);
      expect(held.statusCode).toBe(404);
      expect(held.json().code).toBe("file_not_found");
    }
    const flags = await t.app.inject({
      method: "GET",
      url: "/api/admin/moderation/flags?status=pending&limit=200",
      headers: t.admin.headers,
    });
    const flag = (flags.json().items as Array<{ id: number; messageId: number }>).find(
      (item) => item.messageId === res.json().id,
    )!;
    const approved = await t.app.inject({
      method: "POST",
      url: `/api/admin/moderation/flags/${flag.id}/approve`,
      headers: t.admin.headers,
    });
    expect(approved.statusCode).toBe(200);
    expect((await download(bob, fileId)).body).toBe("held");
  });

  it("leaves nothing to download of an infected upload", async () => {
    const before = await t.ctx.db
      .selectFrom("files")
      .select((eb) => eb.fn.max("id").as("last"))
      .executeTakeFirstOrThrow();
    const res = await upload(t, alice, roomId, [fileField(EICAR, "eicar.com")]);
    expect(res.statusCode).toBe(422);
    const after = await t.ctx.db
      .selectFrom("files")
      .select((eb) => eb.fn.max("id").as("last"))
      .executeTakeFirstOrThrow();
    expect(Number(after.last)).toBe(Number(before.last));
    expect((await download(alice, Number(before.last) + 1)).statusCode).toBe(404);
  });

  it("refuses with 400 invalid_file, posting nothing, any file that is not the poster's to attach", async () => {
    const bobs = await uploaded(bob, "bob's");
    const elsewhere = await uploaded(alice, "other room", "x.txt", "text/plain", otherRoomId);
    const taken = await uploaded(alice, "taken");
    await postWith(alice, { content: "first", fileIds: [taken] });
    const mine = await uploaded(alice, "mine");
    const many = [];
    for (let i = 0; i < 11; i++) many.push(await uploaded(alice, `file ${i}`));
    const cases: unknown[] = [
      [bobs], // uploaded by someone else
      [elsewhere], // uploaded to another room
      [taken], // carried by another message already
      [999999], // no such file
      [mine, mine], // twice
      [mine, bobs], // one of them not the poster's: nothing is attached
      many, // more than 10
    ];
    const messagesBefore = await t.ctx.db
      .selectFrom("messages")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    for (const fileIds of cases) {
      const res = await postWith(alice, { content: "attach", fileIds });
      expect(res.statusCode, JSON.stringify(fileIds)).toBe(400);
      expect(res.json().code).toBe("invalid_file");
    }
    const messagesAfter = await t.ctx.db
      .selectFrom("messages")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(messagesAfter.n)).toBe(Number(messagesBefore.n));
    // `mine` is still free: the refused post attached nothing.
    const ok = await postWith(alice, { content: "now", fileIds: [mine] });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().files.map((file: { id: number }) => file.id)).toEqual([mine]);
    // Ten is the limit.
    const ten = await postWith(alice, { content: "ten", fileIds: many.slice(0, 10) });
    expect(ten.statusCode).toBe(201);
    expect(ten.json().files).toHaveLength(10);
    // Ids that are not ids fail the schema, as everywhere.
    const notIds = await postWith(alice, { content: "bad", fileIds: ["one"] });
    expect(notIds.statusCode).toBe(400);
    expect(notIds.json().code).toBe("validation_failed");
  });

  it("gives a file to one of two posts racing for it", async () => {
    const fileId = await uploaded(alice, "contested");
    const answers = await Promise.all(
      [1, 2, 3].map((n) => postWith(alice, { content: `race ${n}`, fileIds: [fileId] })),
    );
    expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 400, 400]);
    const row = await t.ctx.db
      .selectFrom("files")
      .select("message_id")
      .where("id", "=", fileId)
      .executeTakeFirstOrThrow();
    expect(row.message_id).toBe(answers.find((res) => res.statusCode === 201)!.json().id);
  });

  it("deletes a message's files with it: rows and stored bytes, and the download answers 404", async () => {
    const fileId = await uploaded(alice, "to be deleted", "gone.txt");
    const message = (await postWith(alice, { content: "bye", fileIds: [fileId] })).json();
    const key = await storageKey(fileId);
    const onDisk = path.join(t.dataDir, "files", key);
    expect(fs.existsSync(onDisk)).toBe(true);
    const deleted = await t.app.inject({
      method: "DELETE",
      url: `/api/rooms/${roomId}/messages/${message.id}`,
      headers: alice.headers,
    });
    expect(deleted.statusCode).toBe(204);
    expect(fs.existsSync(onDisk)).toBe(false);
    const rows = await t.ctx.db.selectFrom("files").select("id").where("id", "=", fileId).execute();
    expect(rows).toEqual([]);
    expect((await download(alice, fileId)).statusCode).toBe(404);
  });
});
