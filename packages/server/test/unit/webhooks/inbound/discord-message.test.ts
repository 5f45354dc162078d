import { describe, expect, it } from "vitest";
import { DiscordApiError } from "../../../../src/webhooks/inbound/discord-api-error.js";
import { discordPayloadToMessage } from "../../../../src/webhooks/inbound/discord-message.js";

const refusal = (payload: unknown, options = {}) => {
  try {
    discordPayloadToMessage(payload, options);
  } catch (error) {
    expect(error).toBeInstanceOf(DiscordApiError);
    return error as DiscordApiError;
  }
  throw new Error("expected a refusal");
};

describe("discordPayloadToMessage", () => {
  it("escapes markdown in titles, names and footers, and keeps the description's markdown", () => {
    const { content } = discordPayloadToMessage({
      embeds: [
        {
          title: "*not* [a] link",
          description: "**bold** stays",
          author: { name: "_me_" },
          fields: [{ name: "# not a heading", value: "`code`" }],
          footer: { text: "v1_2" },
        },
      ],
    });
    expect(content).toBe(
      [
        "_\\_me\\__",
        "**\\*not\\* \\[a\\] link**",
        "**bold** stays",
        "**\\# not a heading**\n`code`",
        "_v1\\_2_",
      ].join("\n"),
    );
  });

  it("links with URLs that cannot end early, and refuses URLs that are not http(s)", () => {
    expect(
      discordPayloadToMessage({ embeds: [{ title: "Run", url: "https://ci.example.com/a b(1)" }] })
        .content,
    ).toBe("**[Run](https://ci.example.com/a%20b%281%29)**");
    const error = refusal({ embeds: [{ title: "x", url: "javascript:alert(1)" }] });
    expect(error.body).toEqual({
      message: "Invalid Form Body",
      code: 50035,
      errors: {
        embeds: {
          "0": {
            url: { _errors: [{ code: "URL_TYPE_INVALID_URL", message: "Not a well formed URL." }] },
          },
        },
      },
    });
  });

  it("shows an embed's timestamp in UTC and refuses one that is not ISO 8601", () => {
    expect(
      discordPayloadToMessage({ embeds: [{ title: "t", timestamp: "2026-11-27T12:00:00+02:00" }] })
        .content,
    ).toBe("**t**\n_2026-11-27T10:00:00.000Z_");
    expect(refusal({ embeds: [{ timestamp: "yesterday" }] }).body.errors).toMatchObject({
      embeds: { "0": { timestamp: { _errors: [{ code: "DATE_TYPE_PARSE" }] } } },
    });
  });

  it("marks an embed's color, as a Slack attachment's", () => {
    expect(discordPayloadToMessage({ embeds: [{ title: "ok", color: 0x2ecc71 }] }).content).toBe(
      "🟢 **ok**",
    );
  });

  it("answers 50006 for nothing to show, and accepts 10 embeds but not 11, 25 fields but not 26", () => {
    expect(refusal({ content: "  ", embeds: [{}] }).body).toEqual({
      message: "Cannot send an empty message",
      code: 50006,
    });
    const embeds = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `e${i}` }));
    expect(discordPayloadToMessage({ embeds: embeds(10) }).content?.split("\n\n")).toHaveLength(10);
    expect(refusal({ embeds: embeds(11) }).status).toBe(400);
    const fields = (n: number) => Array.from({ length: n }, () => ({ name: "n", value: "v" }));
    expect(discordPayloadToMessage({ embeds: [{ fields: fields(25) }] }).content).toBeDefined();
    expect(refusal({ embeds: [{ fields: fields(26) }] }).body.errors).toMatchObject({
      embeds: { "0": { fields: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH" }] } } },
    });
  });

  it("keeps username and avatar_url for the caller to use or not, and reads neither on an edit", () => {
    expect(
      discordPayloadToMessage({
        content: "hi",
        username: "  Deploy Bot ",
        avatar_url: "https://example.com/a.png",
      }),
    ).toEqual({ content: "hi", username: "Deploy Bot", avatarUrl: "https://example.com/a.png" });
    expect(discordPayloadToMessage({ content: "hi", username: "x" }, { edit: true })).toEqual({
      content: "hi",
    });
  });

  it("changes nothing on an edit without content or embeds", () => {
    expect(discordPayloadToMessage({ allowed_mentions: { parse: [] } }, { edit: true })).toEqual({
      content: undefined,
    });
    expect(refusal({ content: "" }, { edit: true }).body.code).toBe(50006);
  });

  it("names every field of the wrong type in one answer", () => {
    const error = refusal({ content: 1, username: [], allowed_mentions: { parse: "users" } });
    expect(Object.keys(error.body.errors as object).sort()).toEqual([
      "allowed_mentions",
      "content",
      "username",
    ]);
  });
});
