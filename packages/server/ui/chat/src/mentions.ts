/**
 * Mentions on the chat page: `@username` in markdown text (never in code, a bare URL or an e-mail
 * address) is shown as a mention, the signed-in user's own more strongly. The same reading as the
 * server's (src/chat/mentions.ts), which also checks that the name is a member of the room; the
 * page marks every name written as one.
 */
import type { default as MarkdownIt, StateCore, Token } from "markdown-it";

/**
 * `@` then a username (`[a-z0-9][a-z0-9._-]{0,63}`, as the users API has it; any case), not
 * preceded by a character that would make it part of a word or an address (`ops@example.com`).
 * Punctuation that ends a sentence (`@bob.`) is not part of the name.
 */
const MENTION = /(?<![A-Za-z0-9._%+@-])@([A-Za-z0-9][A-Za-z0-9._-]{0,63})/g;

function nameOf(match: RegExpMatchArray): string {
  return match[1]!.replace(/[._-]+$/, "").toLowerCase();
}

/** The markdown-it plugin: text tokens (not in bare links) become text and `mention` tokens. */
export function mentionPlugin(md: MarkdownIt): void {
  md.core.ruler.push("parley_mentions", (state: StateCore) => {
    for (const block of state.tokens) {
      if (block.type !== "inline" || !block.children) continue;
      const children: Token[] = [];
      let inBareLink = false;
      for (const token of block.children) {
        if (token.type === "link_open")
          inBareLink = token.markup === "linkify" || token.markup === "autolink";
        else if (token.type === "link_close") inBareLink = false;
        if (token.type !== "text" || inBareLink || !token.content.includes("@")) {
          children.push(token);
          continue;
        }
        children.push(...splitMentions(state, token));
      }
      block.children = children;
    }
  });
  md.renderer.rules.mention = (tokens, idx, _options, env: { me?: string }) => {
    const token = tokens[idx]!;
    const username = token.meta as string;
    const own = env.me !== undefined && env.me === username;
    const escape = md.utils.escapeHtml;
    return `<span class="mention${own ? " mention-me" : ""}" data-username="${escape(username)}">${escape(token.content)}</span>`;
  };
}

function splitMentions(state: StateCore, token: Token): Token[] {
  const text = token.content;
  const parts: Token[] = [];
  let last = 0;
  for (const match of text.matchAll(MENTION)) {
    const username = nameOf(match);
    const start = match.index;
    if (start > last) parts.push(textToken(state, text.slice(last, start)));
    const mention = new state.Token("mention", "", 0);
    mention.meta = username;
    // As written (`@Bob` stays `@Bob`), the trailing punctuation left as text.
    mention.content = text.slice(start, start + 1 + username.length);
    parts.push(mention);
    last = start + 1 + username.length;
  }
  if (parts.length === 0) return [token];
  if (last < text.length) parts.push(textToken(state, text.slice(last)));
  return parts;
}

function textToken(state: StateCore, content: string): Token {
  const token = new state.Token("text", "", 0);
  token.content = content;
  return token;
}
