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
  const html = format === "markdown" ? renderMarkdown(content) : sanitizeHtml(content);
  return { html, text: toPlainText(html) };
}
