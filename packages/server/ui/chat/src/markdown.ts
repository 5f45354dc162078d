import MarkdownIt from "markdown-it";
import { shortcodeRule } from "../../../src/chat/rendering/shortcode-rule.js";
import { mentionPlugin } from "./mentions.js";

// Raw HTML off: every `<` in a message is text. markdown-it also refuses javascript:, vbscript:,
// file: and data: (except images) link targets, so its output is safe to insert as HTML.
const md = new MarkdownIt({ html: false, linkify: true, breaks: true });

md.core.ruler.push("shortcodes", shortcodeRule);
md.use(mentionPlugin);

// An image is never fetched (its host would learn who reads the message, when, from where): an
// http(s) image is a link to it, its alt text (or address) the text; inside a link, or with any
// other source, its alt text alone. The server's rendering (contentHtml) does the same.
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  const alt = self.renderInlineAsText(token.children ?? [], options, env);
  const src = token.attrGet("src") ?? "";
  let openLinks = 0;
  for (let i = 0; i < idx; i++) {
    if (tokens[i]!.type === "link_open") openLinks++;
    else if (tokens[i]!.type === "link_close") openLinks--;
  }
  if (openLinks > 0 || !/^https?:\/\//i.test(src)) return md.utils.escapeHtml(alt);
  return `<a href="${md.utils.escapeHtml(src)}">${md.utils.escapeHtml(alt || src)}</a>`;
};

/**
 * A message as HTML: markdown rendered (mentions marked, `me`'s own more strongly); an html-format
 * message (sanitized when stored) as text.
 */
export function renderContent(
  content: string,
  format: "markdown" | "html",
  me?: string,
): HTMLElement {
  const element = document.createElement("div");
  element.className = "content";
  if (format === "markdown") {
    element.innerHTML = md.render(content, { me });
    for (const link of element.querySelectorAll("a")) {
      link.setAttribute("target", "_blank");
      link.setAttribute("rel", "noopener noreferrer");
    }
  } else {
    element.textContent =
      new DOMParser().parseFromString(content, "text/html").body.textContent ?? "";
  }
  return element;
}
