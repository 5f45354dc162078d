import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sanitizeHtml } from "../../../../src/chat/rendering/sanitize-html.js";

const REL = 'rel="noopener noreferrer nofollow"';

describe("sanitizeHtml", () => {
  it("keeps the chat formatting allow-list unchanged", () => {
    const html =
      "<h2>Release</h2><p><strong>b</strong> <em>e</em> <b>b</b> <i>i</i> <u>u</u> <s>s</s> " +
      '<del>d</del> <code>c</code><br /></p><pre><code class="language-ts">x</code></pre>' +
      '<blockquote><p>q</p></blockquote><ul><li>a</li></ul><ol start="3"><li>b</li></ol><hr />' +
      '<table><caption>t</caption><thead><tr><th colspan="2">h</th></tr></thead>' +
      "<tbody><tr><td>1</td><td>2</td></tr></tbody><tfoot><tr><td>f</td></tr></tfoot></table>";
    expect(sanitizeHtml(html)).toBe(html);
  });

  it("adds rel=noopener noreferrer nofollow to every link, replacing the author's rel", () => {
    expect(sanitizeHtml('<a href="https://parley.example" rel="opener">x</a>')).toBe(
      `<a href="https://parley.example" ${REL}>x</a>`,
    );
  });

  it("keeps target only when it is _blank", () => {
    expect(sanitizeHtml('<a href="https://a.example" target="_BLANK">x</a>')).toBe(
      `<a href="https://a.example" target="_blank" ${REL}>x</a>`,
    );
    expect(sanitizeHtml('<a href="https://a.example" target="_top">x</a>')).toBe(
      `<a href="https://a.example" ${REL}>x</a>`,
    );
  });

  it("keeps http, https and mailto links and paths on the same site", () => {
    for (const href of ["http://a.example/x", "https://a.example/?q=1#f", "mailto:ops@a.example"]) {
      expect(sanitizeHtml(`<a href="${href}">x</a>`)).toBe(`<a href="${href}" ${REL}>x</a>`);
    }
    expect(sanitizeHtml('<a href="/rooms/3">x</a>')).toBe(`<a href="/rooms/3" ${REL}>x</a>`);
    expect(sanitizeHtml('<a href="#top">x</a>')).toBe(`<a href="#top" ${REL}>x</a>`);
  });

  it("unwraps a link whose URL is refused, keeping its text", () => {
    for (const href of [
      "javascript:alert(1)",
      " JaVaScRiPt:alert(1)",
      "jav&#x09;ascript:alert(1)",
      "vbscript:msgbox(1)",
      "data:text/html,hi",
      "//evil.example/x",
      "ftp://files.example/x",
      "relative/path",
    ]) {
      expect(sanitizeHtml(`<a href="${href}">click</a>`), href).toBe("click");
    }
  });

  it("shows an image as a link to it, never as an image a reader's browser would fetch", () => {
    expect(sanitizeHtml('<img src="https://tracker.example/pixel.png" alt="t">')).toBe(
      `<a href="https://tracker.example/pixel.png" ${REL}>t</a>`,
    );
    expect(
      sanitizeHtml('<p><img src="https://cdn.example/cat.png" alt="cat" title="Cat" /></p>'),
    ).toBe(`<p><a href="https://cdn.example/cat.png" title="Cat" ${REL}>cat</a></p>`);
    // No alt text: the address is the link's text; an alt is text, never markup.
    expect(sanitizeHtml('<img src="http://a.example/x.png">')).toBe(
      `<a href="http://a.example/x.png" ${REL}>http://a.example/x.png</a>`,
    );
    expect(sanitizeHtml('<img src="https://a.example/x.png" alt="<b>x</b> &amp;">')).toBe(
      `<a href="https://a.example/x.png" ${REL}>&lt;b&gt;x&lt;/b&gt; &amp;</a>`,
    );
  });

  it("shows an image inside a link as its alt text, so the link stays one link", () => {
    expect(
      sanitizeHtml(
        '<a href="https://ci.example/42"><img src="https://ci.example/badge.svg" alt="build"></a> <img src="https://a.example/x.png" alt="after">',
      ),
    ).toBe(
      `<a href="https://ci.example/42" ${REL}>build</a> <a href="https://a.example/x.png" ${REL}>after</a>`,
    );
  });

  it("drops an image whose source is not an absolute http(s) URL", () => {
    for (const src of ["/x.png", "x.png", "//a.example/x.png", "data:image/png;base64,AA", ""]) {
      expect(sanitizeHtml(`<p><img src="${src}" alt="x"></p>`), src).toBe("<p></p>");
    }
  });

  it("drops style, class (except a code language), id and event-handler attributes", () => {
    expect(
      sanitizeHtml(
        '<p style="color:red" class="x" id="y" onclick="z">a</p><code class="language-js evil">c</code>',
      ),
    ).toBe('<p>a</p><code class="language-js">c</code>');
  });

  it("drops script, style, iframe, object and form content entirely", () => {
    expect(
      sanitizeHtml(
        "a<script>s()</script><style>p{}</style><iframe>i</iframe><object>o</object>" +
          "<textarea>t</textarea><select><option>o</option></select>b",
      ),
    ).toBe("ab");
  });

  it("unwraps other unknown elements, keeping their text escaped", () => {
    expect(sanitizeHtml("<div><span>hi</span> <custom-el>&lt;b&gt;</custom-el></div>")).toBe(
      "hi &lt;b&gt;",
    );
  });

  it("escapes text so it cannot become markup", () => {
    expect(sanitizeHtml("1 < 2 & 3 > 2")).toBe("1 &lt; 2 &amp; 3 &gt; 2");
  });

  it("is idempotent on arbitrary HTML-like input", () => {
    const fragment = fc.oneof(
      fc.constantFrom(
        "<p>",
        "</p>",
        "<a href=\"https://x.example/?a=1&b=2\" target='_blank'>",
        "<a href='javascript:alert(1)'>",
        '<a href=/local title="t">',
        "</a>",
        "<img src=https://x.example/a.png alt=a>",
        "<img src=x onerror=alert(1)>",
        "<script>",
        "</script>",
        "<style>",
        "<b>",
        "</b>",
        '<code class="language-ts other">',
        "</code>",
        "<table><tr><td>",
        "</td></tr></table>",
        "<ol start=2><li>",
        "<br>",
        "<br/>",
        "<svg onload=x>",
        "<math>",
        "<textarea>",
        "<noscript>",
        "<!--",
        "-->",
        "<![CDATA[",
        "]]>",
        "&amp;",
        "&lt;",
        "&#x3C;",
        "&",
        "&nbsp;",
        "<",
        ">",
        '"',
        "'",
        "=",
        " ",
        "\n",
        "text",
      ),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 30 }), (parts) => {
        const once = sanitizeHtml(parts.join(""));
        expect(sanitizeHtml(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });
});
