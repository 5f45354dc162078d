import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { post } from "../chat/chat-helpers.js";

describeEachDialect("safety checks on what readers see, on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user("user", "alice");
    roomId = (await createRoom(t, alice, "general")).id;
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ["an HTML entity inside a card number", "card &#52;111 1111 1111 1111", "html", "payment_card"],
    ["an HTML entity inside an access key", "AKIA&#73;OSFODNN7EXAMPLE", "html", "cloud_access_key"],
    [
      "markdown emphasis inside a card number",
      "4111 1111 1111 111**1**",
      "markdown",
      "payment_card",
    ],
    [
      "a markdown entity inside a card number",
      "4111 1111 1111 111&#49;",
      "markdown",
      "payment_card",
    ],
    ["tags inside an access key", "AKIA<b>IOSFODNN7</b>EXAMPLE", "html", "cloud_access_key"],
  ])("blocks %s", async (_name, content, format, ruleId) => {
    const res = await post(t, alice, roomId, content, format);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toMatchObject({ code: "dlp_blocked", ruleId });
  });

  it("moderates the words a reader sees, not only the ones typed", async () => {
    const res = await post(t, alice, roomId, "I will k**i**ll you");
    expect(res.statusCode).toBe(201);
    expect(res.json().moderationStatus).not.toBe("none");
  });

  it("takes content nested deeper than any renderer recurses, and serves every representation", async () => {
    for (const content of ["<b>".repeat(5000) + "x", "<ul><li>".repeat(2000) + "x"]) {
      const res = await post(t, alice, roomId, content, "html");
      expect(res.statusCode, res.body).toBe(201);
      const full = await t.app.inject({
        url: `/api/rooms/${roomId}/messages/${res.json<{ id: number }>().id}`,
        headers: { ...t.admin.headers, accept: "application/vnd.parley.v3.full+json" },
      });
      expect(full.statusCode).toBe(200);
      expect(full.json().contentText).toMatch(/x$/);
    }
  });
});
