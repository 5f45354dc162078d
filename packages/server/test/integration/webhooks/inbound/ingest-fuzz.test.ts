import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect } from "../../../helpers/dialects.js";
import { createWebhook, ingestPath, unknownToken } from "./inbound-helpers.js";

const contentTypes = fc.oneof(
  fc.constantFrom(
    "application/json",
    "application/json; charset=utf-8",
    "application/json; charset=latin1",
    "application/x-www-form-urlencoded",
    "text/plain",
    "multipart/form-data; boundary=x",
    "application/octet-stream",
    "",
  ),
  fc.stringMatching(/^[a-z]{1,10}\/[a-z+.-]{1,15}$/),
);

const text = fc.string({ unit: "binary", maxLength: 300 });
const slackish = fc.record(
  {
    text: fc.oneof(text, fc.jsonValue()),
    mrkdwn: fc.boolean(),
    username: fc.oneof(text, fc.jsonValue()),
    icon_url: fc.oneof(fc.webUrl(), text),
    blocks: fc.array(
      fc.record(
        {
          type: fc.constantFrom(
            "header",
            "section",
            "context",
            "divider",
            "image",
            "rich_text",
            "actions",
            "x",
          ),
          text: fc.oneof(
            fc.record({ type: fc.constantFrom("mrkdwn", "plain_text"), text }),
            fc.jsonValue(),
          ),
          fields: fc.array(fc.record({ type: fc.constantFrom("mrkdwn", "plain_text"), text })),
          elements: fc.array(fc.jsonValue(), { maxLength: 3 }),
          image_url: fc.oneof(fc.webUrl(), text),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 4 },
    ),
    attachments: fc.oneof(
      fc.array(
        fc.record(
          {
            fallback: text,
            pretext: text,
            title: text,
            title_link: fc.oneof(fc.webUrl(), text),
            text,
            color: fc.oneof(fc.constantFrom("good", "danger", "#36a64f", "#fff"), text),
            fields: fc.array(
              fc.record({
                title: text,
                value: fc.oneof(text, fc.jsonValue()),
                short: fc.boolean(),
              }),
              { maxLength: 3 },
            ),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 4 },
      ),
      fc.jsonValue(),
    ),
  },
  { requiredKeys: [] },
);

const bodies = fc.oneof(
  fc
    .record(
      {
        content: fc.oneof(text, fc.jsonValue()),
        contentFormat: fc.oneof(fc.constantFrom("markdown", "html"), text),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc
    .record({ content: fc.string({ unit: "grapheme", minLength: 16_000, maxLength: 16_500 }) })
    .map((v) => JSON.stringify(v)),
  slackish.map((v) => JSON.stringify(v)),
  slackish.map((v) => `payload=${encodeURIComponent(JSON.stringify(v))}`),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  text,
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
);

const headerValue = fc.stringMatching(/^[\x21-\x7e]{0,40}$/);
const extraHeaders = fc.dictionary(
  fc.constantFrom(
    "accept",
    "accept-encoding",
    "content-encoding",
    "user-agent",
    "x-forwarded-for",
    "content-language",
    "expect",
  ),
  headerValue,
  { maxKeys: 3 },
);

describeEachDialect("ingest under random input on $name", (dialect) => {
  let t: TestApp;
  let tokens: string[];
  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "1000000/1m" });
    const live = await createWebhook(t, { allowOverrides: true });
    const disabled = await createWebhook(t, { enabled: false });
    tokens = [
      live.token,
      live.token,
      live.token,
      disabled.token,
      unknownToken(),
      "short",
      "%7Bx%7D",
      "a".repeat(90),
    ];
  });
  afterAll(async () => {
    await t.close();
  });

  it("never answers 5xx, whatever the body, content type, headers or token", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: 7 }),
        fc.boolean(),
        contentTypes,
        bodies,
        extraHeaders,
        async (tokenIndex, slack, contentType, payload, headers) => {
          const res = await t.app.inject({
            method: "POST",
            url: ingestPath(tokens[tokenIndex]!, slack),
            headers: { ...headers, ...(contentType ? { "content-type": contentType } : {}) },
            payload,
          });
          expect(res.statusCode, `${res.statusCode} ${res.body.slice(0, 300)}`).toBeLessThan(500);
          if (slack) expect(res.headers["content-type"] ?? "", res.body).toMatch(/^text\/plain/);
        },
      ),
      { numRuns: 200 },
    );
  });
});
