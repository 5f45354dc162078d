import MarkdownIt from "markdown-it";
import { sanitizeHtml } from "./sanitize-html.js";

// Raw HTML in markdown is shown as text, never interpreted; bare URLs become links; a single
// newline is a line break, as people type in chat.
const parser = new MarkdownIt({ html: false, linkify: true, breaks: true });

/**
 * Renders chat markdown to safe HTML. markdown-it's own link validation only blocks a few schemes,
 * so its output goes through the same sanitizer as HTML messages.
 */
export function renderMarkdown(markdown: string): string {
  return sanitizeHtml(parser.render(markdown));
}
