import { renderMarkdown } from "./render-markdown.js";
import { sanitizeHtml } from "./sanitize-html.js";
import { toPlainText } from "./to-plain-text.js";

export type ContentFormat = "markdown" | "html";

export interface RenderedMessage {
  html: string;
  text: string;
}

/**
 * The HTML and plain-text representations of a stored message. HTML content was sanitized when
 * it was stored; sanitizing it again is idempotent and protects against rows written before a
 * sanitizer change.
 */
export function renderMessage(content: string, format: ContentFormat): RenderedMessage {
  const key = `${format}:${content}`;
  const cached = recent.get(key);
  if (cached) {
    // Most recently used last, so the oldest entry is the first one out.
    recent.delete(key);
    recent.set(key, cached);
    return cached;
  }
  const rendered = renderWithoutCache(content, format);
  if (recent.size >= CACHE_ENTRIES) recent.delete(recent.keys().next().value!);
  recent.set(key, rendered);
  return rendered;
}

/** The rendering itself, every time (benchmarks and bounds tests). */
export function renderWithoutCache(content: string, format: ContentFormat): RenderedMessage {
  const html = format === "markdown" ? renderMarkdown(content) : sanitizeHtml(content);
  return { html, text: toPlainText(html) };
}

/**
 * Rendering a 16 KB message costs milliseconds to tens of milliseconds, and the same message is
 * rendered when it is posted (DLP and moderation read its plain text) and at every fetch of a
 * .text, .html or .full representation. The last 64 are kept (at most about 10 MB
 * with the largest messages and their HTML), so fetching one message again and again does not render it again and again.
 */
const CACHE_ENTRIES = 64;
const recent = new Map<string, RenderedMessage>();
