import { readFileSync } from "node:fs";
import { Parser } from "htmlparser2";
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../../../../src/chat/rendering/render-markdown.js";
import { sanitizeHtml } from "../../../../src/chat/rendering/sanitize-html.js";

interface XssPayload {
  name: string;
  payload: string;
}

const PAYLOADS = JSON.parse(
  readFileSync(new URL("../../../fixtures/safety/xss-payloads.json", import.meta.url), "utf8"),
) as XssPayload[];

const ALLOWED_ATTRIBUTES: Record<string, readonly string[]> = {
  p: [],
  br: [],
  strong: [],
  em: [],
  b: [],
  i: [],
  u: [],
  s: [],
  del: [],
  code: ["class"],
  pre: [],
  blockquote: [],
  ul: [],
  ol: ["start"],
  li: [],
  a: ["href", "title", "target", "rel"],
  h1: [],
  h2: [],
  h3: [],
  h4: [],
  h5: [],
  h6: [],
  hr: [],
  table: [],
  caption: [],
  thead: [],
  tbody: [],
  tfoot: [],
  tr: [],
  th: ["colspan", "rowspan"],
  td: ["colspan", "rowspan"],
};

// Browsers drop these before reading a URL's scheme, so a check must too.
function normaliseUrl(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u0020\u007f-\u009f]/g, "").toLowerCase();
}

/** Every way the output could still run script, found by parsing it as a browser would tokenize it. */
function findUnsafeMarkup(html: string): string[] {
  const problems: string[] = [];
  if (/<script/i.test(html)) problems.push("raw <script");
  const strayTag = /<(?!\/?([a-z][a-z0-9]*)[\s/>])/gi;
  for (const match of html.matchAll(strayTag)) problems.push(`stray "<" at ${match.index}`);
  for (const match of html.matchAll(/<\/?([a-z][a-z0-9]*)/gi)) {
    const tag = match[1]!.toLowerCase();
    if (!(tag in ALLOWED_ATTRIBUTES)) problems.push(`tag <${tag}> in raw output`);
  }
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const allowed = ALLOWED_ATTRIBUTES[name];
        if (!allowed) {
          problems.push(`tag <${name}>`);
          return;
        }
        for (const [attribute, value] of Object.entries(attribs)) {
          if (/^on/i.test(attribute)) problems.push(`event handler ${attribute} on <${name}>`);
          if (!allowed.includes(attribute)) problems.push(`attribute ${attribute} on <${name}>`);
          if (attribute === "href" || attribute === "src") {
            const url = normaliseUrl(value);
            if (/^(javascript|vbscript|data):/.test(url)) {
              problems.push(`${attribute}="${value}" on <${name}>`);
            }
            if (!/^(https?:|mailto:|\/(?![/\\])|#)/.test(url)) {
              problems.push(`${attribute} scheme not allowed: ${value}`);
            }
          }
        }
      },
    },
    { decodeEntities: true, lowerCaseAttributeNames: true, lowerCaseTags: true },
  );
  parser.end(html);
  return problems;
}

describe("XSS payload corpus", () => {
  it("holds at least 40 distinct payloads", () => {
    expect(PAYLOADS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(PAYLOADS.map((p) => p.payload)).size).toBe(PAYLOADS.length);
  });

  it("the unsafe-markup check itself catches each kind of leak", () => {
    expect(findUnsafeMarkup("<script>x</script>")).not.toEqual([]);
    expect(findUnsafeMarkup('<img src="https://a.example/x.png" onerror="x">')).not.toEqual([]);
    expect(findUnsafeMarkup('<a href="jav&#x09;ascript:x">x</a>')).not.toEqual([]);
    expect(findUnsafeMarkup('<a href=" DATA:text/html,x">x</a>')).not.toEqual([]);
    expect(findUnsafeMarkup('<img src="/relative.png">')).not.toEqual([]);
    expect(findUnsafeMarkup("<svg></svg>")).not.toEqual([]);
    expect(findUnsafeMarkup('<p style="x">a</p>')).not.toEqual([]);
    expect(findUnsafeMarkup('<a href="https://a.example" rel="x">ok</a> &lt;b&gt;')).toEqual([]);
  });
});

describe.each(PAYLOADS)("payload: $name", ({ payload }) => {
  it("sanitizeHtml leaves no script, event handler or dangerous URL", () => {
    expect(findUnsafeMarkup(sanitizeHtml(payload))).toEqual([]);
  });

  it("renderMarkdown leaves no script, event handler or dangerous URL", () => {
    expect(findUnsafeMarkup(renderMarkdown(payload))).toEqual([]);
  });

  it("sanitizing the sanitized output changes nothing", () => {
    const once = sanitizeHtml(payload);
    expect(sanitizeHtml(once)).toBe(once);
  });
});
