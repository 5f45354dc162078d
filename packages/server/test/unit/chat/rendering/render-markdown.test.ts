import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../../../../src/chat/rendering/render-markdown.js";

const REL = 'rel="noopener noreferrer nofollow"';

describe("renderMarkdown", () => {
  it("renders bold, emphasis, strikethrough and inline code", () => {
    expect(renderMarkdown("**bold** _em_ ~~gone~~ `a < b`")).toBe(
      "<p><strong>bold</strong> <em>em</em> <s>gone</s> <code>a &lt; b</code></p>\n",
    );
  });

  it("renders links with a title and the forced rel", () => {
    expect(renderMarkdown('[Parley](https://parley.example/docs "Docs")')).toBe(
      `<p><a href="https://parley.example/docs" title="Docs" ${REL}>Parley</a></p>\n`,
    );
  });

  it("turns bare URLs and e-mail addresses into links", () => {
    expect(renderMarkdown("see https://parley.example or ops@example.com")).toBe(
      `<p>see <a href="https://parley.example" ${REL}>https://parley.example</a> or ` +
        `<a href="mailto:ops@example.com" ${REL}>ops@example.com</a></p>\n`,
    );
  });

  it("renders fenced code with its language class and escapes its content", () => {
    expect(renderMarkdown("```ts\nconst x = '<b>';\n```")).toBe(
      "<pre><code class=\"language-ts\">const x = '&lt;b&gt;';\n</code></pre>\n",
    );
  });

  it("shows raw HTML as text instead of interpreting it", () => {
    expect(renderMarkdown("<b>hi</b>")).toBe("<p>&lt;b&gt;hi&lt;/b&gt;</p>\n");
  });

  it("treats a single newline as a line break", () => {
    expect(renderMarkdown("one\ntwo")).toBe("<p>one<br />\ntwo</p>\n");
  });

  it("renders tables, lists, quotes and headings", () => {
    const html = renderMarkdown("# T\n\n> q\n\n- a\n- b\n\n| x | y |\n|---|--:|\n| 1 | 2 |");
    expect(html).toContain("<h1>T</h1>");
    expect(html).toContain("<blockquote>\n<p>q</p>\n</blockquote>");
    expect(html).toContain("<ul>\n<li>a</li>\n<li>b</li>\n</ul>");
    // Alignment comes as a style attribute, which the sanitizer drops.
    expect(html).toContain("<th>y</th>");
    expect(html).toContain("<td>2</td>");
  });

  it("renders an http(s) image as a link to it, a badge in a link as the link, and drops data: images", () => {
    const rel = 'rel="noopener noreferrer nofollow"';
    expect(renderMarkdown("![t](https://tracker.example/pixel.png)")).toBe(
      `<p><a href="https://tracker.example/pixel.png" ${rel}>t</a></p>\n`,
    );
    expect(renderMarkdown("[![build](https://ci.example/badge.svg)](https://ci.example/42)")).toBe(
      `<p><a href="https://ci.example/42" ${rel}>build</a></p>\n`,
    );
    expect(renderMarkdown("![x](data:image/png;base64,AAAA)")).toBe("<p></p>\n");
  });

  it("does not turn a javascript: link into an anchor", () => {
    expect(renderMarkdown("[x](javascript:alert(1))")).not.toContain("<a");
  });
});
