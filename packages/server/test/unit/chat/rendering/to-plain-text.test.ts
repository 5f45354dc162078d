import { describe, expect, it } from "vitest";
import { toPlainText } from "../../../../src/chat/rendering/to-plain-text.js";

describe("toPlainText", () => {
  it("strips tags and decodes entities", () => {
    expect(toPlainText("<p><strong>Deploy</strong> &amp; <em>verify</em> &lt;soon&gt;</p>")).toBe(
      "Deploy & verify <soon>",
    );
  });

  it("renders a link as its text followed by the URL in parentheses", () => {
    expect(toPlainText('<p>see <a href="https://parley.example/docs">the docs</a></p>')).toBe(
      "see the docs (https://parley.example/docs)",
    );
  });

  it("does not repeat a URL that is already the link text", () => {
    expect(toPlainText('<a href="https://parley.example">https://parley.example</a>')).toBe(
      "https://parley.example",
    );
  });

  it("does not wrap long lines", () => {
    const long = "word ".repeat(60).trim();
    expect(toPlainText(`<p>${long}</p>`)).toBe(long);
  });

  it("keeps headings' case and separates blocks with blank lines", () => {
    expect(toPlainText("<h1>Title</h1><p>one</p><p>two</p>")).toBe("Title\n\none\n\ntwo");
  });

  it("trims surrounding whitespace", () => {
    expect(toPlainText("  <p>  hi  </p>\n\n")).toBe("hi");
  });
});
