import { convert } from "html-to-text";
import type { HtmlToTextOptions } from "html-to-text";

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  selectors: [
    { selector: "a", options: { linkBrackets: ["(", ")"], hideLinkHrefIfSameAsText: true } },
    { selector: "img", options: { linkBrackets: ["(", ")"] } },
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({
      selector,
      options: { uppercase: false },
    })),
    { selector: "table", format: "dataTable", options: { uppercaseHeaderCells: false } },
  ],
};

/** Plain-text representation of message HTML: no tags, links as `text (url)`, no line wrapping. */
export function toPlainText(html: string): string {
  return convert(html, OPTIONS).trim();
}
