import { codePointAt } from "./code-point-at.js";

/** The first `count` code points of `text` (RFC 6570 prefixes count characters, not UTF-16 units). */
export function takeCodePoints(text: string, count: number): string {
  let index = 0;
  for (let taken = 0; taken < count && index < text.length; taken++) {
    index += codePointAt(text, index)[1];
  }
  return index >= text.length ? text : text.slice(0, index);
}
