import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sign } from "@octokit/webhooks-methods";
import type { InboundWebhookWithToken } from "@parley/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect } from "../../../helpers/dialects.js";
import { createWebhook, ingestPath, messagesOf } from "./inbound-helpers.js";

const FIXTURES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../fixtures/github",
);
/** A real GitHub payload (test/fixtures/github/README.md), as an object to vary. */
const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")) as Record<
    string,
    unknown
  >;

const SECRET = "github-secret-9f8e7d6c5b4a";
let deliveries = 0;
const deliveryId = () => `d2a1f0b0-0000-4000-8000-${String(++deliveries).padStart(12, "0")}`;

describeEachDialect("GitHub deliveries on $name", (dialect) => {
  let t: TestApp;
  let signed: InboundWebhookWithToken;
  let unsigned: InboundWebhookWithToken;

  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
    signed = await createWebhook(t, { displayName: "GitHub", signingSecret: SECRET });
    unsigned = await createWebhook(t, { displayName: "GitHub (unsigned)" });
  });
  afterAll(async () => {
    await t.close();
  });

  /** Sends `payload` as GitHub does: JSON, X-GitHub-Event, a delivery id, the signature. */
  async function deliver(
    event: string,
    payload: unknown,
    options: {
      hook?: InboundWebhookWithToken;
      headers?: Record<string, string>;
      form?: boolean;
    } = {},
  ) {
    const hook = options.hook ?? signed;
    const json = JSON.stringify(payload);
    const body = options.form ? `payload=${encodeURIComponent(json)}` : json;
    return t.app.inject({
      method: "POST",
      url: `${ingestPath(hook.token)}/github`,
      headers: {
        "content-type": options.form ? "application/x-www-form-urlencoded" : "application/json",
        "user-agent": "GitHub-Hookshot/abc123",
        "x-github-event": event,
        "x-github-delivery": deliveryId(),
        "x-hub-signature-256": await sign(SECRET, body),
        ...options.headers,
      },
      payload: body,
    });
  }

  const lastContent = async (hook = signed) => (await messagesOf(t, hook.roomId)).at(-1)!.content;

  it("posts a push with its branch, commits (short sha, first line, author) and links", async () => {
    const res = await deliver("push", fixture("push"));
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(["messageId", "timestamp"]);
    const row = (await messagesOf(t, signed.roomId)).at(-1)!;
    expect(row).toMatchObject({ id: res.json().messageId, content_format: "markdown" });
    expect(row.content).toBe(
      "**Codertocat** pushed [1 commit](https://github.com/Codertocat/Hello-World/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf246) " +
        "to branch [master](https://github.com/Codertocat/Hello-World/tree/master) in " +
        "[Codertocat/Hello-World](https://github.com/Codertocat/Hello-World)\n" +
        "- [6113728](https://github.com/Codertocat/Hello-World/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf246) Initial commit (Codertocat)",
    );
  });

  it("lists 5 commits of a bigger push and counts the rest", async () => {
    const push = fixture("push");
    const commit = (push.commits as Array<Record<string, unknown>>)[0]!;
    push.commits = Array.from({ length: 7 }, (_, i) => ({
      ...commit,
      id: `${i}`.repeat(40),
      message: `Change ${i}\n\nwith a body that is not shown`,
    }));
    expect((await deliver("push", push)).statusCode).toBe(200);
    const content = await lastContent();
    expect(content).toContain("pushed [7 commits]");
    expect(content.split("\n").filter((line) => line.startsWith("- ["))).toHaveLength(5);
    expect(content).toContain("- [4444444](");
    expect(content).not.toContain("5555555");
    expect(content).not.toContain("with a body");
    expect(content.endsWith("\n- and 2 more")).toBe(true);
  });

  it("is not taken for spam for the links it writes itself (a push of many commits), while the words in it are still read", async () => {
    const push = fixture("push");
    const commit = (push.commits as Array<Record<string, unknown>>)[0]!;
    push.commits = Array.from({ length: 7 }, (_, i) => ({ ...commit, id: `${i}`.repeat(40) }));
    expect((await deliver("push", push)).statusCode).toBe(200);
    // Eight distinct links: from a person, the local classifier's wall-of-links evidence.
    const row = (await messagesOf(t, signed.roomId)).at(-1)!;
    expect(row.content.match(/https:\/\//g)?.length).toBeGreaterThanOrEqual(8);
    expect(row.moderation_status).toBe("none");
    const spam = fixture("push");
    spam.commits = [
      { ...commit, message: "free money crypto giveaway limited time offer act now click here" },
    ];
    expect((await deliver("push", spam)).statusCode).toBe(200);
    const flagged = (await messagesOf(t, signed.roomId)).at(-1)!;
    expect(flagged.moderation_status).not.toBe("none");
  });

  it.each([
    [
      "pull_request",
      "pull_request.opened",
      {},
      "opened pull request [#2 Update the README with new information.]",
    ],
    ["pull_request", "pull_request.closed", {}, "closed pull request [#"],
    ["pull_request", "pull_request.reopened", {}, "reopened pull request [#"],
    [
      "pull_request",
      "pull_request.ready_for_review",
      {},
      "marked ready for review pull request [#",
    ],
    ["pull_request_review", "pull_request_review.submitted", {}, "pull request [#"],
    ["issues", "issues.opened", {}, "opened issue [#"],
    ["issues", "issues.reopened", {}, "reopened issue [#"],
    ["issue_comment", "issue_comment.created", {}, "commented on"],
    ["release", "release.published", {}, "published release ["],
    ["workflow_run", "workflow_run.completed", {}, "Workflow ["],
    ["create", "create", {}, "created tag [simple-tag]"],
    ["delete", "delete", {}, "deleted tag `simple-tag`"],
    [
      "star",
      "star.created",
      {},
      "starred [Codertocat/Hello-World](https://github.com/Codertocat/Hello-World)",
    ],
    [
      "fork",
      "fork",
      {},
      "forked [Codertocat/Hello-World](https://github.com/Codertocat/Hello-World) to [",
    ],
  ])("posts %s (%s) as one markdown message", async (event, name, _x, expected) => {
    const res = await deliver(event, fixture(name));
    expect(res.statusCode).toBe(200);
    const content = await lastContent();
    expect(content).toContain(expected);
    expect(content).toMatch(/\]\(https:\/\/github\.com\//);
  });

  it("says merged for a closed pull request that was merged (fixture varied: merged true)", async () => {
    const payload = fixture("pull_request.closed");
    payload.pull_request = { ...(payload.pull_request as object), merged: true };
    await deliver("pull_request", payload);
    expect(await lastContent()).toMatch(/^\*\*\w+\*\* merged pull request \[#\d+ /);
  });

  it("posts a closed issue (fixture varied: action closed)", async () => {
    await deliver("issues", { ...fixture("issues.reopened"), action: "closed" });
    expect(await lastContent()).toMatch(/ closed issue \[#\d+ /);
  });

  it("quotes the first 500 characters of a comment, escaped", async () => {
    const payload = fixture("issue_comment.created");
    payload.comment = {
      ...(payload.comment as object),
      body: `**not bold** [x](javascript:alert(1)) ${"y".repeat(600)}`,
    };
    await deliver("issue_comment", payload);
    const quoted = (await lastContent()).split("\n").slice(1).join("\n");
    expect(quoted.startsWith("> \\*\\*not bold\\*\\* \\[x\\]")).toBe(true);
    expect(quoted).toContain("…");
    expect(quoted.match(/y/g)!.length).toBeLessThan(500);
  });

  it("shows the workflow run's conclusion", async () => {
    const payload = fixture("workflow_run.completed");
    const run = payload.workflow_run as Record<string, unknown>;
    await deliver("workflow_run", { ...payload, workflow_run: { ...run, conclusion: "failure" } });
    expect(await lastContent()).toContain("**failure**");
  });

  it("answers ping with 204 and posts nothing", async () => {
    const before = (await messagesOf(t, signed.roomId)).length;
    const res = await deliver("ping", fixture("ping"));
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect((await messagesOf(t, signed.roomId)).length).toBe(before);
  });

  it.each([
    ["pull_request", "pull_request.labeled", "pull_request.labeled"],
    ["issues", "issues.labeled", "issues.labeled"],
    ["watch", "watch.started", "watch.started"],
    ["star", "star.created", "star.deleted"],
    ["gollum", "push", "gollum"],
  ])(
    "answers 204 with Parley-Ignored for an event or action it does not post (%s)",
    async (event, name, ignored) => {
      const payload = fixture(name);
      if (ignored === "star.deleted") payload.action = "deleted";
      if (event === "gollum") delete payload.action;
      const before = (await messagesOf(t, signed.roomId)).length;
      const res = await deliver(event, payload);
      expect(res.statusCode).toBe(204);
      expect(res.headers["parley-ignored"]).toBe(ignored);
      expect((await messagesOf(t, signed.roomId)).length).toBe(before);
    },
  );

  it("takes the form-encoded content type (payload=...), signed over the form body", async () => {
    const res = await deliver("push", fixture("push"), { form: true });
    expect(res.statusCode).toBe(200);
    expect(await lastContent()).toContain("pushed [1 commit]");
  });

  describe("signatures", () => {
    it("refuses a missing signature with 401 invalid_signature and posts nothing", async () => {
      const before = (await messagesOf(t, signed.roomId)).length;
      const res = await deliver("push", fixture("push"), {
        headers: { "x-hub-signature-256": "" },
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: "invalid_signature" });
      expect(res.body).not.toContain(SECRET);
      expect((await messagesOf(t, signed.roomId)).length).toBe(before);
    });

    it("refuses a signature made with another secret, or over other bytes", async () => {
      const payload = fixture("push");
      const other = await sign("another-secret-0123456789", JSON.stringify(payload));
      const wrong = await deliver("push", payload, { headers: { "x-hub-signature-256": other } });
      expect(wrong.statusCode).toBe(401);
      const tampered = await sign(SECRET, JSON.stringify({ ...payload, ref: "refs/heads/x" }));
      const res = await deliver("push", payload, { headers: { "x-hub-signature-256": tampered } });
      expect(res.statusCode).toBe(401);
      // The old SHA-1 header alone is not enough.
      const sha1 = await deliver("push", payload, {
        headers: { "x-hub-signature-256": "", "x-hub-signature": "sha1=0123" },
      });
      expect(sha1.statusCode).toBe(401);
    });

    it("accepts unsigned deliveries when the webhook has no signing secret", async () => {
      const res = await deliver("push", fixture("push"), {
        hook: unsigned,
        headers: { "x-hub-signature-256": "" },
      });
      expect(res.statusCode).toBe(200);
    });

    it("answers an unknown token 404 before looking at the signature", async () => {
      const res = await t.app.inject({
        method: "POST",
        url: `${ingestPath("A".repeat(43))}/github`,
        headers: { "content-type": "application/json", "x-github-event": "push" },
        payload: "{}",
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: "not_found" });
    });
  });

  it("answers a redelivery (same X-GitHub-Delivery) with the first answer and posts once", async () => {
    const id = deliveryId();
    const before = (await messagesOf(t, signed.roomId)).length;
    const first = await deliver("push", fixture("push"), { headers: { "x-github-delivery": id } });
    const again = await deliver("push", fixture("push"), { headers: { "x-github-delivery": id } });
    expect(first.statusCode).toBe(200);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect(again.statusCode).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toBe(first.body);
    expect((await messagesOf(t, signed.roomId)).length).toBe(before + 1);

    const ignored = deliveryId();
    await deliver("watch", fixture("watch.started"), { headers: { "x-github-delivery": ignored } });
    const replayed = await deliver("watch", fixture("watch.started"), {
      headers: { "x-github-delivery": ignored },
    });
    expect(replayed.statusCode).toBe(204);
    expect(replayed.headers["parley-ignored"]).toBe("watch.started");
    expect(replayed.headers["idempotent-replayed"]).toBe("true");
  });

  it("refuses a delivery without X-GitHub-Event, and a body that is not a JSON object, with 400", async () => {
    const noEvent = await deliver("push", fixture("push"), { headers: { "x-github-event": "" } });
    expect(noEvent.statusCode).toBe(400);
    expect(noEvent.json()).toMatchObject({ field: "headers.x-github-event" });
    const notObject = await deliver("push", [1, 2]);
    expect(notObject.statusCode).toBe(400);
  });

  it("answers 400 invalid_idempotency_key for a bad Idempotency-Key, as every inbound route", async () => {
    const res = await deliver("push", fixture("push"), { headers: { "idempotency-key": "" } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "invalid_idempotency_key" });
  });

  it("applies DLP as ingest does: 422 dlp_blocked, nothing posted", async () => {
    const payload = fixture("issues.opened");
    payload.issue = { ...(payload.issue as object), title: "card 4111 1111 1111 1111 exp 12/30" };
    const before = (await messagesOf(t, signed.roomId)).length;
    const res = await deliver("issues", payload);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: "dlp_blocked" });
    expect((await messagesOf(t, signed.roomId)).length).toBe(before);
  });
});
