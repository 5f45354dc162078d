import MarkdownIt from "markdown-it";

// Raw HTML off: every `<` in a message is text. markdown-it also refuses javascript:, vbscript:,
// file: and data: (except images) link targets, so its output is safe to insert as HTML.
const md = new MarkdownIt({ html: false, linkify: true, breaks: true });

/** A message as HTML: markdown rendered; an html-format message (sanitized when stored) as text. */
export function renderContent(content: string, format: "markdown" | "html"): HTMLElement {
  const element = document.createElement("div");
  element.className = "content";
  if (format === "markdown") {
    element.innerHTML = md.render(content);
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
