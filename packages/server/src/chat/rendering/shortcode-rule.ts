import type { StateCore } from "markdown-it";
import { replaceShortcodes } from "./shortcodes.js";

/**
 * A markdown-it core rule: shortcodes (`:tada:`) become their emoji in the text of the parsed
 * document, after markdown-it joined its adjacent text tokens; never in code spans or blocks
 * (other tokens), in a link's address (an attribute) or in a bare URL shown as its own text. The
 * server's renderer and the chat page's use this one rule, so both show the same emoji.
 */
export function shortcodeRule(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    let inBareUrl = false;
    for (const token of block.children) {
      if (token.type === "link_open")
        inBareUrl = token.markup === "linkify" || token.markup === "autolink";
      else if (token.type === "link_close") inBareUrl = false;
      else if (token.type === "text" && !inBareUrl)
        token.content = replaceShortcodes(token.content);
    }
  }
}
