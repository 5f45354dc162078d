import { AppError } from "../errors/app-error.js";

/** A word of a search: matched as a whole word, or as a prefix when typed with a trailing `*`. */
export interface SearchTerm {
  text: string;
  prefix: boolean;
}

/** The longest `?q=`, in characters. */
export const MAX_QUERY_LENGTH = 200;
/** The most words a search may have (each is one more list for the index to intersect). */
export const MAX_QUERY_TERMS = 16;

/**
 * A word: letters, digits and combining marks. Everything else separates words, in the query as in
 * the indexed text (SQLite's unicode61 tokenizer; PostgreSQL's parser with the punctuation that
 * joins words turned into spaces), so no character of the query is ever FTS5 or tsquery syntax.
 */
export const WORD = /[\p{L}\p{N}\p{M}]+/gu;

function invalidQuery(detail: string): AppError {
  return new AppError("invalid_query", detail);
}

/**
 * The words of `?q=`, lowercased, each to be found (AND), in the order typed, without repeats. A
 * word followed by `*` matches as a prefix. Quotes, operators and other punctuation are not
 * syntax: they separate words. Empty, whitespace only, longer than 200 characters, without a word
 * or with more than 16 words: 400 invalid_query.
 */
export function parseSearchQuery(q: string | undefined): SearchTerm[] {
  if (q === undefined || q.trim() === "")
    throw invalidQuery("q, the words to search for, is required");
  if ([...q].length > MAX_QUERY_LENGTH)
    throw invalidQuery(`q is longer than ${MAX_QUERY_LENGTH} characters`);
  const terms: SearchTerm[] = [];
  const seen = new Set<string>();
  for (const match of q.normalize("NFC").matchAll(/([\p{L}\p{N}\p{M}]+)(\*?)/gu)) {
    const text = match[1]!.toLowerCase();
    const prefix = match[2] === "*";
    const key = `${prefix ? "*" : "="}${text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    terms.push({ text, prefix });
  }
  if (terms.length === 0) throw invalidQuery("q has no word to search for (letters or digits)");
  if (terms.length > MAX_QUERY_TERMS)
    throw invalidQuery(`q has more than ${MAX_QUERY_TERMS} words`);
  return terms;
}

/** Whether a word of a message's text is one the terms look for (what its snippet marks). */
export function matchesTerm(word: string, terms: readonly SearchTerm[]): boolean {
  const lower = word.normalize("NFC").toLowerCase();
  return terms.some((term) => (term.prefix ? lower.startsWith(term.text) : lower === term.text));
}
