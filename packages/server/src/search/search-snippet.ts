import { matchesTerm, WORD, type SearchTerm } from "./search-query.js";

/** The most characters of a message's text a snippet shows (plus an ellipsis at either end). */
export const SNIPPET_CHARS = 200;
/** How much text a snippet keeps before its first marked word. */
const LEAD_CHARS = 60;

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text as HTML text, its runs of white space (new lines included) as one space. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!).replace(/\s+/g, " ");
}

/**
 * A hit's snippet, HTML: the message's plain text escaped, then the words the search matched
 * wrapped in `<mark>`; no other markup, so it is safe to insert as HTML. A text longer than 200
 * characters is cut around its first matched word, with "…" where it was cut.
 */
export function searchSnippet(text: string, terms: readonly SearchTerm[]): string {
  const words = [...text.matchAll(WORD)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
  }));
  const marked = words.filter((w) => matchesTerm(text.slice(w.start, w.end), terms));
  let start = 0;
  let end = text.length;
  if (text.length > SNIPPET_CHARS) {
    const first = marked[0]?.start ?? 0;
    start = Math.max(0, Math.min(first - LEAD_CHARS, text.length - SNIPPET_CHARS));
    end = Math.min(text.length, start + SNIPPET_CHARS);
    // Not in the middle of a word: from the word that starts after the cut, to the last whole one.
    if (start > 0) start = words.find((w) => w.start >= start)?.start ?? start;
    if (end < text.length) end = words.filter((w) => w.end <= end).at(-1)?.end ?? end;
  }
  let html = start > 0 ? "…" : "";
  let at = start;
  for (const word of marked) {
    if (word.start < start || word.end > end) continue;
    html += `${escapeHtml(text.slice(at, word.start))}<mark>${escapeHtml(text.slice(word.start, word.end))}</mark>`;
    at = word.end;
  }
  html += escapeHtml(text.slice(at, end));
  return (end < text.length ? `${html}…` : html).trim();
}
