/**
 * An image in a message would be fetched by every reader's browser, telling whoever serves it who
 * reads, when and from where. Rendered messages show an image as a link to it (markdown, HTML, and
 * HTML rows stored before the rule), and the browser UIs load images from Parley only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { joinRoom, post } from "../chat/chat-helpers.js";

const PIXEL = "https://tracker.example/pixel.png";
const REL = 'rel="noopener noreferrer nofollow"';
const FULL = "application/vnd.parley.v3.full+json";

describeEachDialect("images in messages on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let reader: TestUser;
  let roomId: number;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    reader = await t.user("bot", "reader");
    roomId = (await createRoom(t, alice, "pixels")).id;
    await joinRoom(t, reader, roomId);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function read(messageId: number): Promise<{ contentHtml: string; contentText: string }> {
    const res = await t.app.inject({
      url: `/api/rooms/${roomId}/messages/${messageId}`,
      headers: { ...reader.headers, accept: FULL },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  async function postOk(content: string, contentFormat: "markdown" | "html"): Promise<number> {
    const res = await post(t, alice, roomId, content, contentFormat);
    expect(res.statusCode).toBe(201);
    return res.json().id;
  }

  it("shows a markdown image as a link to it, not as an image", async () => {
    const { contentHtml, contentText } = await read(await postOk(`![t](${PIXEL})`, "markdown"));
    expect(contentHtml).not.toContain("<img");
    expect(contentHtml).toBe(`<p><a href="${PIXEL}" ${REL}>t</a></p>\n`);
    expect(contentText).toBe(`t (${PIXEL})`);
  });

  it("shows an HTML image as a link to it, not as an image", async () => {
    const { contentHtml } = await read(await postOk(`<p><img src="${PIXEL}" alt="t"></p>`, "html"));
    expect(contentHtml).toBe(`<p><a href="${PIXEL}" ${REL}>t</a></p>`);
  });

  it("shows as a link an image in an HTML message stored before the rule", async () => {
    const now = Date.now();
    const { id } = await t.ctx.db
      .insertInto("messages")
      .values({
        room_id: roomId,
        sender_user_id: alice.id,
        inbound_webhook_id: null,
        sender_display_name: "alice",
        sender_avatar_url: null,
        content: `<p><img src="${PIXEL}" alt="t" /></p>`,
        content_format: "html",
        moderation_status: "none",
        created_at: now,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const { contentHtml } = await read(id);
    expect(contentHtml).not.toContain("<img");
    expect(contentHtml).toContain(`<a href="${PIXEL}" ${REL}>t</a>`);
  });
});

describe("browser UIs' image policy", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(["/app/", "/admin/"])("loads images on %s from Parley only", async (url) => {
    const res = await t.app.inject({ url });
    const csp = String(res.headers["content-security-policy"]);
    const imgSrc = /(?:^|;\s*)img-src ([^;]*)/.exec(csp)?.[1];
    expect(imgSrc).toBe("'self' data:");
  });
});
