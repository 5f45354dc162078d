import { describe, expect, it } from "vitest";
import {
  colorMarker,
  slackPayloadToMessage,
} from "../../../../src/webhooks/inbound/slack-message.js";
import { slackMrkdwnToMarkdown } from "../../../../src/webhooks/inbound/slack-mrkdwn.js";
import { renderMarkdown } from "../../../../src/chat/rendering/render-markdown.js";
import { ALERTMANAGER_PAYLOAD } from "./slack-payloads.js";

describe("Slack mrkdwn to markdown", () => {
  it("converts bold, strike, links, mentions and entities, and leaves code alone", () => {
    expect(
      slackMrkdwnToMarkdown(
        "*bold* _it_ ~gone~ <https://x.example/a_b|the *label*> <!here> <!channel> <@U123|bob> <#C1|general> `a *b* c` &lt;tag&gt; &amp; 2*3*4",
      ),
    ).toBe(
      "**bold** _it_ ~~gone~~ [the *label*](https://x.example/a_b) @here @channel @bob #general `a *b* c` <tag> & 2*3*4",
    );
  });

  it("keeps bare <url> links as autolinks and escapes a leading # so it is not a heading", () => {
    expect(slackMrkdwnToMarkdown("# of alerts: 3 <https://ci.example.com/run/1>")).toBe(
      "\\# of alerts: 3 <https://ci.example.com/run/1>",
    );
  });

  it("puts one-line ``` fences on their own lines", () => {
    expect(slackMrkdwnToMarkdown("log: ```npm ERR! *boom*```")).toBe(
      "log: ```\nnpm ERR! *boom*\n```",
    );
  });

  it("encodes spaces and parentheses in link targets", () => {
    expect(slackMrkdwnToMarkdown("<https://x.example/a (b)|see>")).toBe(
      "[see](https://x.example/a%20%28b%29)",
    );
  });
});

describe("Slack payload to a Parley message", () => {
  it("renders an Alertmanager attachment: color marker, linked bold title, mrkdwn text", () => {
    const message = slackPayloadToMessage(ALERTMANAGER_PAYLOAD);
    expect(message.content).toBe(
      [
        "🔴 **[\\[FIRING:1\\] HighLatency api (critical)](http://alertmanager:9093/#/alerts?receiver=slack)**",
        "**Alert:** API latency above 500ms - `critical`",
        "**Description:** p99 latency is 812ms on [the API dashboard](http://grafana:3000/d/api)",
        "**Details:**",
        "  • **alertname:** `HighLatency`",
        "  • **instance:** `api-1:8080`",
      ].join("\n"),
    );
    expect(message.username).toBe("Alertmanager");
    expect(message.iconUrl).toBeUndefined();
  });

  it("renders text, then each attachment's pretext, author, title, text, fields, image and footer", () => {
    const message = slackPayloadToMessage({
      text: "Build finished",
      attachments: [
        {
          color: "#36a64f",
          pretext: "main branch",
          author_name: "ci-bot",
          title: "Build #42",
          text: "All *green*",
          fields: [
            { title: "Duration", value: "3m 12s", short: true },
            { title: "Commit", value: "<https://git.example.com/c/abc|abc123>", short: true },
          ],
          image_url: "https://ci.example.com/badge.png",
          footer: "CI",
        },
        { fallback: "second attachment" },
      ],
    });
    expect(message.content).toBe(
      [
        "Build finished",
        "",
        "main branch",
        "_ci-bot_",
        "🟢 **Build #42**",
        "All **green**",
        "**Duration**: 3m 12s",
        "**Commit**: [abc123](https://git.example.com/c/abc)",
        "![](https://ci.example.com/badge.png)",
        "_CI_",
        "",
        "second attachment",
      ].join("\n"),
    );
  });

  it("renders Block Kit header, section text and fields, divider, context and link buttons instead of text", () => {
    const message = slackPayloadToMessage({
      text: "notification fallback",
      blocks: [
        { type: "header", text: { type: "plain_text", text: "Deploy *done*" } },
        {
          type: "section",
          text: { type: "mrkdwn", text: "*api* is live" },
          fields: [
            { type: "mrkdwn", text: "*Env:* prod" },
            { type: "plain_text", text: "v1.2.3" },
          ],
        },
        { type: "divider" },
        {
          type: "context",
          elements: [
            { type: "mrkdwn", text: "by <@U1|ann>" },
            { type: "image", image_url: "https://x/y.png" },
          ],
        },
        {
          type: "actions",
          elements: [
            {
              type: "button",
              text: { type: "plain_text", text: "Open" },
              url: "https://app.example.com",
            },
          ],
        },
        { type: "unknown_future_block" },
      ],
    });
    expect(message.content).toBe(
      "### Deploy \\*done\\*\n\n**api** is live\n**Env:** prod\nv1.2.3\n\n---\n\nby @ann\n\n[Open](https://app.example.com)",
    );
  });

  it("renders rich_text blocks best-effort", () => {
    const message = slackPayloadToMessage({
      blocks: [
        {
          type: "rich_text",
          elements: [
            {
              type: "rich_text_section",
              elements: [
                { type: "text", text: "Hello " },
                { type: "text", text: "world", style: { bold: true } },
                { type: "emoji", name: "wave", unicode: "1f44b" },
                { type: "link", url: "https://x.example", text: "site" },
              ],
            },
            {
              type: "rich_text_list",
              style: "bullet",
              elements: [{ type: "rich_text_section", elements: [{ type: "text", text: "one" }] }],
            },
          ],
        },
      ],
    });
    expect(message.content).toBe("Hello **world**👋[site](https://x.example)\n- one");
  });

  describe("a styled rich_text run keeps its leading and trailing spaces outside its markers", () => {
    /** The content of one rich_text section made of these text runs. */
    const section = (...runs: Array<string | { text: string; style: object }>) =>
      slackPayloadToMessage({
        blocks: [
          {
            type: "rich_text",
            elements: [
              {
                type: "rich_text_section",
                elements: runs.map((run) =>
                  typeof run === "string" ? { type: "text", text: run } : { type: "text", ...run },
                ),
              },
            ],
          },
        ],
      }).content;

    it.each([
      ["bold", { bold: true }, "**", "**"],
      ["italic", { italic: true }, "_", "_"],
      ["strike", { strike: true }, "~~", "~~"],
      ["code", { code: true }, "`", "`"],
    ])("%s", (_name, style, open, close) => {
      expect(section("Hello", { text: " styled ", style }, "world")).toBe(
        `Hello ${open}styled${close} world`,
      );
      // Spaces on one side only, several of them, and tabs.
      expect(section("a", { text: "  b", style }, "c")).toBe(`a  ${open}b${close}c`);
      expect(section("a", { text: "b\t", style }, "c")).toBe(`a${open}b${close}\tc`);
    });

    it("combined styles", () => {
      expect(
        section(
          "x",
          { text: " all three ", style: { bold: true, italic: true, strike: true } },
          "y",
        ),
      ).toBe("x ~~_**all three**_~~ y");
      expect(section("x", { text: " both", style: { bold: true, italic: true } }, "y")).toBe(
        "x _**both**_y",
      );
      // Code shows its text as is: the other styles do not apply inside it.
      expect(section("x", { text: " *c* ", style: { code: true, bold: true } }, "y")).toBe(
        "x `*c*` y",
      );
    });

    it("an all-space styled run is its spaces, without empty markers", () => {
      for (const style of [
        { bold: true },
        { italic: true },
        { strike: true },
        { code: true },
        { bold: true, italic: true, strike: true },
      ]) {
        expect(section("a", { text: "   ", style }, "b"), JSON.stringify(style)).toBe("a   b");
        expect(section("a", { text: "", style }, "b"), JSON.stringify(style)).toBe("ab");
      }
    });

    it("renders bold, not asterisks, in the chat", () => {
      const content = section("Deploy", { text: " done ", style: { bold: true } }, "at noon");
      expect(renderMarkdown(content)).toBe("<p>Deploy <strong>done</strong> at noon</p>\n");
    });
  });

  it("escapes markdown in text when mrkdwn is false", () => {
    expect(slackPayloadToMessage({ text: "*not bold* _x_", mrkdwn: false }).content).toBe(
      "\\*not bold\\* \\_x\\_",
    );
  });

  it("uses text when blocks render to nothing", () => {
    expect(slackPayloadToMessage({ text: "hi", blocks: [{ type: "image" }] }).content).toBe("hi");
  });

  it("refuses a payload with nothing to show (no_text), a non-object (invalid_payload) and too many attachments", () => {
    for (const payload of [
      {},
      { text: "   " },
      { attachments: [{}] },
      { blocks: [] },
      { username: "x" },
    ]) {
      expect(() => slackPayloadToMessage(payload), JSON.stringify(payload)).toThrow(
        expect.objectContaining({ code: "no_text" }),
      );
    }
    for (const payload of [null, [], "text", 3]) {
      expect(() => slackPayloadToMessage(payload)).toThrow(
        expect.objectContaining({ code: "invalid_payload" }),
      );
    }
    expect(() =>
      slackPayloadToMessage({
        text: "x",
        attachments: Array.from({ length: 101 }, () => ({ text: "a" })),
      }),
    ).toThrow(expect.objectContaining({ code: "too_many_attachments" }));
  });

  it("truncates an over-long message at a character boundary, as Slack does, within 16384 bytes", () => {
    const message = slackPayloadToMessage({ text: "€".repeat(8000) });
    expect(Buffer.byteLength(message.content)).toBeLessThanOrEqual(16384);
    expect(message.content).toMatch(/^€+\n\n_… \(truncated\)_$/);
  });

  it("keeps icon_url only when it is an absolute http(s) URL", () => {
    expect(slackPayloadToMessage({ text: "x", icon_url: "https://x.example/i.png" }).iconUrl).toBe(
      "https://x.example/i.png",
    );
    expect(
      slackPayloadToMessage({ text: "x", icon_url: "javascript:alert(1)" }).iconUrl,
    ).toBeUndefined();
    expect(slackPayloadToMessage({ text: "x", icon_url: "/relative.png" }).iconUrl).toBeUndefined();
  });

  it("maps attachment colors to markers", () => {
    expect(
      [
        "good",
        "warning",
        "danger",
        "#36a64f",
        "#D63232",
        "#439FE0",
        "#ffcc00",
        "#cccccc",
        "blue?",
      ].map(colorMarker),
    ).toEqual(["🟢", "🟠", "🔴", "🟢", "🔴", "🔵", "🟠", "", ""]);
  });
});
