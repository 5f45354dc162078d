/**
 * What the moderation page judges a flag by: the flag names its room and author, and its context
 * holds the conversation around it and the author's other flags.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ModerationClassifier } from "../../../src/safety/moderation/moderation-classifier.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { apiFor, createRoom } from "../../helpers/fixtures.js";
import { joinRoom, post } from "./chat-helpers.js";

const stubClassifier: ModerationClassifier = {
  name: "stub",
  async classify(text) {
    if (text.includes("QUARANTINE")) return { category: "harassment", score: 0.95 };
    if (text.includes("FLAG")) return { category: "spam", score: 0.6 };
    return { category: "none", score: 0 };
  },
};

describeEachDialect("moderation context on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.ctx.safety.classifier = stubClassifier;
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    roomId = (await createRoom(t, alice, "the-lounge")).id;
    await joinRoom(t, bob, roomId);
  });
  afterAll(async () => {
    await t.close();
  });

  const flagOf = async (messageId: number) => {
    const { data } = await apiFor(t)("GET /api/admin/moderation/flags", { limit: 200 });
    return data.items.find((flag) => flag.messageId === messageId)!;
  };
  const text = (item: object) => ("content" in item ? item.content : undefined);

  it("names the flag's room and author", async () => {
    const flagged = (await post(t, bob, roomId, "FLAG one")).json();
    const flag = await flagOf(flagged.id);
    expect(flag).toMatchObject({ roomName: "the-lounge", authorId: bob.id, authorUsername: "bob" });
    const { data: one } = await apiFor(t)("GET /api/admin/moderation/flags/{id}", { id: flag.id });
    expect(one).toMatchObject({ roomName: "the-lounge", authorUsername: "bob" });
  });

  it("answers up to 5 messages each side in the conversation, hidden ones included, and the author's other flags", async () => {
    for (let i = 1; i <= 6; i++) await post(t, alice, roomId, `before ${i}`);
    const hidden = (await post(t, bob, roomId, "QUARANTINE earlier")).json();
    const flagged = (await post(t, bob, roomId, "FLAG this one")).json();
    // A reply in a thread is another conversation: not a neighbour at the top level.
    await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: alice.headers,
      payload: { content: "a reply elsewhere", threadId: hidden.id },
    });
    for (let i = 1; i <= 2; i++) await post(t, alice, roomId, `after ${i}`);
    const flag = await flagOf(flagged.id);
    const { data } = await apiFor(t)("GET /api/admin/moderation/flags/{id}/context", {
      id: flag.id,
    });
    expect(data.before.map(text)).toEqual([
      "before 3",
      "before 4",
      "before 5",
      "before 6",
      "QUARANTINE earlier",
    ]);
    expect(data.after.map(text)).toEqual(["after 1", "after 2"]);
    // Bob's other flags, newest first: the quarantine, then the first flag.
    expect(data.authorFlags.map((f) => f.messageId)).toEqual([
      hidden.id,
      ...data.authorFlags.slice(1).map((f) => f.messageId),
    ]);
    expect(data.authorFlags.every((f) => f.authorUsername === "bob" && f.id !== flag.id)).toBe(
      true,
    );
    expect(data.authorFlags).toHaveLength(2);
  });

  it("answers 404 for an unknown flag and 403 to anyone but an admin", async () => {
    const unknown = await t.app.inject({
      method: "GET",
      url: "/api/admin/moderation/flags/999999/context",
      headers: t.admin.headers,
    });
    expect(unknown.statusCode).toBe(404);
    const user = await t.app.inject({
      method: "GET",
      url: "/api/admin/moderation/flags/1/context",
      headers: alice.headers,
    });
    expect(user.statusCode).toBe(403);
  });
});
