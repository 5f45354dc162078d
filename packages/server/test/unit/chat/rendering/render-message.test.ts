import { describe, expect, it } from "vitest";
import { renderMessage } from "../../../../src/chat/rendering/render-message.js";
import { sanitizeHtml } from "../../../../src/chat/rendering/sanitize-html.js";

describe("renderMessage", () => {
  it("renders markdown content to sanitized HTML and its plain text", () => {
    expect(renderMessage("**Build** passed: [log](https://ci.example/1)", "markdown")).toEqual({
      html:
        '<p><strong>Build</strong> passed: <a href="https://ci.example/1" ' +
        'rel="noopener noreferrer nofollow">log</a></p>\n',
      text: "Build passed: log (https://ci.example/1)",
    });
  });

  it("does not interpret markdown syntax in HTML content", () => {
    expect(renderMessage("<p>**not bold**</p>", "html")).toEqual({
      html: "<p>**not bold**</p>",
      text: "**not bold**",
    });
  });

  it("returns stored (already sanitized) HTML content unchanged", () => {
    const stored = sanitizeHtml('<p>Hi <a href="https://a.example" onclick="x">there</a></p>');
    expect(renderMessage(stored, "html").html).toBe(stored);
  });

  it("sanitizes HTML content that was stored unsanitized", () => {
    const { html, text } = renderMessage("<p>ok</p><script>alert(1)</script>", "html");
    expect(html).toBe("<p>ok</p>");
    expect(text).toBe("ok");
  });
});
