import MarkdownIt from "markdown-it";
import { sanitizeHtml } from "./sanitize-html.js";
import { shortcodeRule } from "./shortcode-rule.js";

// Raw HTML in markdown is shown as text, never interpreted; bare URLs become links; a single
// newline is a line break, as people type in chat.
const parser = new MarkdownIt({ html: false, linkify: true, breaks: true });

/**
 * Longest run without whitespace that is looked at for links found in plain text. A link never
 * contains whitespace; linkify-it, given a long run full of "http://", re-scans the rest of it at
 * every one (16 KB of "[a](http://x/" took a third of a second). Bounding the run it sees makes
 * the work linear; a longer run is left as text (it can still be a [link](...)).
 */
const MAX_AUTOLINK_RUN = 2048;
const linkify = parser.linkify;
const matchAtStart = linkify.matchAtStart.bind(linkify);
const matchAll = linkify.match.bind(linkify);

linkify.matchAtStart = (text: string) => {
  const run = /^\S*/.exec(text.slice(0, MAX_AUTOLINK_RUN + 1))![0];
  return run.length > MAX_AUTOLINK_RUN ? null : matchAtStart(run);
};
linkify.match = (text: string) => {
  const found: NonNullable<ReturnType<typeof matchAll>> = [];
  for (const run of text.matchAll(/\S+/g)) {
    if (run[0].length > MAX_AUTOLINK_RUN) continue;
    for (const match of matchAll(run[0]) ?? []) {
      match.index += run.index;
      match.lastIndex += run.index;
      found.push(match);
    }
  }
  // markdown-it asks only after test() said yes, and then reads .length: an empty list, not null.
  return found;
};

parser.core.ruler.push("shortcodes", shortcodeRule);

/** The tokens markdown-it parses chat markdown into, as renderMarkdown() sees them. */
export function parseMarkdown(markdown: string): ReturnType<typeof parser.parse> {
  return parser.parse(markdown, {});
}

/**
 * Renders chat markdown to safe HTML. markdown-it's own link validation only blocks a few schemes,
 * so its output goes through the same sanitizer as HTML messages.
 */
export function renderMarkdown(markdown: string): string {
  return sanitizeHtml(parser.render(markdown));
}
