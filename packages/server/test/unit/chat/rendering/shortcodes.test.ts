import { describe, expect, it } from "vitest";
import { renderMessage } from "../../../../src/chat/rendering/render-message.js";
import { emojiForShortcode, replaceShortcodes } from "../../../../src/chat/rendering/shortcodes.js";

describe("emojiForShortcode", () => {
  it("knows the names people type, from the emoji data package", () => {
    expect(emojiForShortcode("tada")).toBe("🎉");
    expect(emojiForShortcode("+1")).toBe("👍");
    expect(emojiForShortcode("-1")).toBe("👎");
    expect(emojiForShortcode("white_check_mark")).toBe("✅");
  });

  it("answers undefined for an unknown name or an Object property", () => {
    expect(emojiForShortcode("not_an_emoji_name")).toBeUndefined();
    expect(emojiForShortcode("constructor")).toBeUndefined();
    expect(emojiForShortcode("__proto__")).toBeUndefined();
  });
});

describe("replaceShortcodes", () => {
  it("replaces known names between colons and keeps unknown ones as typed", () => {
    expect(replaceShortcodes("ship it :tada: :nope: :+1:")).toBe("ship it 🎉 :nope: 👍");
  });
});

describe("shortcodes in rendered markdown", () => {
  it("render to their emoji in contentHtml and contentText", () => {
    expect(renderMessage("done :tada:", "markdown")).toEqual({
      html: "<p>done 🎉</p>\n",
      text: "done 🎉",
    });
  });

  it("stay as typed in code spans and code blocks", () => {
    expect(renderMessage("`:tada:`", "markdown").html).toBe("<p><code>:tada:</code></p>\n");
    expect(renderMessage("```\n:tada:\n```", "markdown").html).toBe(
      "<pre><code>:tada:\n</code></pre>\n",
    );
  });

  it("stay as typed in link addresses and in bare URLs", () => {
    const { html } = renderMessage(
      "[:tada:](https://x.example/:tada:) https://y.example/:tada:",
      "markdown",
    );
    expect(html).toContain('href="https://x.example/:tada:"');
    expect(html).toContain(">🎉</a>");
    expect(html).toContain(">https://y.example/:tada:</a>");
  });

  it("are not rendered in HTML content", () => {
    expect(renderMessage("<p>:tada:</p>", "html").html).toBe("<p>:tada:</p>");
  });
});
