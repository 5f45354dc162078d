import { compile } from "html-to-text";
import type { FormatCallback, HtmlToTextOptions } from "html-to-text";
import { MAX_HTML_DEPTH } from "./sanitize-html.js";

type DomNode = Parameters<FormatCallback>[0];

/**
 * A table as one line per row, cells separated by " | ". html-to-text's own data-table layout
 * (column widths, rowspans) grows quadratically with the rows: a 16 KB markdown table of 5,400
 * rows took most of a second. This walks each cell once.
 */
const formatTableRows: FormatCallback = (table, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2 });
  const visit = (nodes: DomNode[]) => {
    for (const node of nodes) {
      if (node.type !== "tag") continue;
      if (node.name === "tr") {
        builder.openBlock({ leadingLineBreaks: 1 });
        let first = true;
        for (const cell of node.children ?? []) {
          if (cell.type !== "tag") continue;
          if (!first) builder.addLiteral(" | ");
          first = false;
          walk(cell.children ?? [], builder);
        }
        builder.closeBlock({ trailingLineBreaks: 1 });
      } else if (node.name === "caption") {
        builder.openBlock({ leadingLineBreaks: 1 });
        walk(node.children ?? [], builder);
        builder.closeBlock({ trailingLineBreaks: 1 });
      } else {
        visit(node.children ?? []);
      }
    }
  };
  visit(table.children ?? []);
  builder.closeBlock({ trailingLineBreaks: 2 });
};

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  formatters: { tableRows: formatTableRows },
  // Sanitized HTML is never deeper than MAX_HTML_DEPTH; this only guards against a stored row
  // that somehow is (html-to-text recurses per level and would overflow the stack).
  limits: { maxDepth: MAX_HTML_DEPTH + 8 },
  selectors: [
    { selector: "a", options: { linkBrackets: ["(", ")"], hideLinkHrefIfSameAsText: true } },
    ...["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({
      selector,
      options: { uppercase: false },
    })),
    { selector: "table", format: "tableRows" },
  ],
};

/**
 * The options compiled once: `convert(html, options)` builds its selector decision tree on every
 * call, which was most of the cost of rendering a short message (about 0.7 ms of each post).
 */
const convert = compile(OPTIONS);

/** Plain-text representation of message HTML: no tags, links as `text (url)`, no line wrapping. */
export function toPlainText(html: string): string {
  return convert(html).trim();
}
