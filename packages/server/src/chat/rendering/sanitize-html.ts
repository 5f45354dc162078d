import sanitize from "sanitize-html";
import type { IOptions, Attributes, Tag } from "sanitize-html";

const HTTP_URL = /^https?:\/\//i;
// Absolute web and mail links, or paths on Parley itself. Anything else (other schemes, odd
// relative forms such as a backtick-quoted value) is refused rather than interpreted.
const ALLOWED_HREF = /^(?:https?:|mailto:|\/(?![/\\])|#)/i;

// Order matters for idempotency: attributes are re-emitted in this fixed order, so sanitizing
// sanitized output yields the same string.
function normaliseLinkAttributes(attribs: Attributes): Attributes {
  const out: Attributes = {};
  const href = attribs.href?.trim();
  if (href !== undefined && ALLOWED_HREF.test(href)) out.href = href;
  if (attribs.title !== undefined) out.title = attribs.title;
  if (attribs.target?.toLowerCase() === "_blank") out.target = "_blank";
  // Always set, whatever the author wrote: no window.opener, no referrer, no SEO credit for spam.
  out.rel = "noopener noreferrer nofollow";
  return out;
}

/** How many <a> the sanitizer is inside (reset for every pass: a pass runs synchronously). */
let openLinks = 0;

/**
 * A message's image is never fetched by its readers' browsers: an image from anywhere would tell
 * whoever serves it who reads the message, when and from where. An image on the web becomes a
 * link to it, its alt text (or its address) the link's text; inside a link, its alt text alone
 * (a link in a link is not HTML). Any other image (relative, data:, other schemes) is dropped.
 */
function imageAsLink(attribs: Attributes): Tag {
  const src = attribs.src?.trim() ?? "";
  // A name no rule allows: the tag is discarded, and its `text` (if any) kept as text.
  const asText = (text: string): Tag => ({ tagName: "image-text", attribs: {}, text });
  if (!HTTP_URL.test(src)) return asText("");
  const alt = attribs.alt?.trim() ?? "";
  if (openLinks > 0) return asText(alt);
  const link: Attributes = { href: src };
  if (attribs.title !== undefined) link.title = attribs.title;
  return { tagName: "a", attribs: normaliseLinkAttributes(link), text: alt === "" ? src : alt };
}

/**
 * Deepest element nesting kept. Tags below it are dropped and their text kept, so no message,
 * however it nests, can overflow the stack of what renders it later (html-to-text recurses per
 * level: 3,000 nested <b> overflowed it), and no text hides from the plain-text view DLP reads.
 * Real messages stay far above it (a table cell's paragraph's link is 6 deep).
 */
export const MAX_HTML_DEPTH = 48;

const OPTIONS: IOptions = {
  nestingLimit: MAX_HTML_DEPTH,
  allowedTags: [
    "p",
    "br",
    "strong",
    "em",
    "b",
    "i",
    "u",
    "s",
    "del",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "table",
    "caption",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "th",
    "td",
  ],
  allowedAttributes: {
    a: ["href", "title", "target", "rel"],
    ol: ["start"],
    th: ["colspan", "rowspan"],
    td: ["colspan", "rowspan"],
  },
  // Fenced code blocks carry their language for client-side highlighting.
  allowedClasses: { code: ["language-*"] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  allowVulnerableTags: false,
  disallowedTagsMode: "discard",
  // Elements whose content is code, raw text or a hidden document: drop it together with the tag
  // rather than surfacing it as visible text.
  nonTextTags: [
    "script",
    "style",
    "textarea",
    "option",
    "select",
    "xmp",
    "noscript",
    "noembed",
    "noframes",
    "iframe",
    "object",
    "template",
    "title",
    "plaintext",
    // Foreign content: htmlparser2 stops applying HTML's implied end tags inside it, so keeping
    // its text would let the same input parse differently once the wrapper is gone.
    "svg",
    "math",
  ],
  onOpenTag: (tagName) => {
    if (tagName === "a") openLinks++;
  },
  onCloseTag: (tagName) => {
    if (tagName === "a") openLinks--;
  },
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: normaliseLinkAttributes(attribs) }),
    img: (_tagName, attribs) => imageAsLink(attribs),
  },
  exclusiveFilter: (frame) => {
    // A link whose href was refused keeps its text, not an empty anchor.
    if (frame.tag === "a" && frame.attribs.href === undefined) return "excludeTag";
    return false;
  },
};

// Property tests never needed more than two; the bound only stops a pathological input looping.
const MAX_PASSES = 4;

/**
 * Reduces untrusted HTML to the small set of formatting chat messages may use. Idempotent:
 * sanitizing already-sanitized HTML returns it unchanged.
 */
export function sanitizeHtml(html: string): string {
  // One pass can leave markup that parses differently the second time (a tag dropped from
  // between two others changes which end tags are implied), so repeat until the output is
  // stable: stored HTML must come back byte for byte when it is sanitized again on read.
  const sanitizeOnce = (input: string): string => {
    openLinks = 0;
    return sanitize(input, OPTIONS);
  };
  let current = sanitizeOnce(html);
  // Unchanged by a pass: already stable (stored HTML sanitized again on read, most markdown).
  if (current === html) return current;
  for (let pass = 1; pass < MAX_PASSES; pass++) {
    const next = sanitizeOnce(current);
    if (next === current) return current;
    current = next;
  }
  return current;
}
