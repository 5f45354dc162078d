/**
 * Mentions on the chat page: `@username` in markdown text (never in code, never inside a link) is
 * shown as a mention, the signed-in user's own more strongly. The server decides who was really
 * addressed (a member of the room); the page marks every name written as one.
 */
import type { default as MarkdownIt, StateCore, Token } from "markdown-it";

/**
 * `@` then a username (`[a-z0-9][a-z0-9._-]{0,63}`, as the users API has it), not preceded by a
 * character that would make it part of a word or an address (`a@b.example` is no mention).
 * Punctuation that ends a sentence (`@bob.`) is not part of the name.
 */
const MENTION = /(^|[^A-Za-z0-9._@-])@([a-z0-9][a-z0-9._-]{0,63})/g;

/** The usernames a text mentions, in order, each once. */
export function mentionsIn(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(MENTION)) found.add(trimName(match[2]!));
  return [...found];
}

function trimName(name: string): string {
  return name.replace(/[._-]+$/, "");
}

/** The markdown-it plugin: text tokens outside links become text and `mention` tokens. */
export function mentionPlugin(md: MarkdownIt): void {
  md.core.ruler.push("parley_mentions", (state: StateCore) => {
    for (const block of state.tokens) {
      if (block.type !== "inline" || !block.children) continue;
      const children: Token[] = [];
      let inLink = 0;
      for (const token of block.children) {
        if (token.type === "link_open") inLink++;
        if (token.type === "link_close") inLink--;
        if (token.type !== "text" || inLink > 0) {
          children.push(token);
          continue;
        }
        children.push(...splitMentions(state, token));
      }
      block.children = children;
    }
  });
  md.renderer.rules.mention = (tokens, idx, _options, env: { me?: string }) => {
    const username = tokens[idx]!.meta as string;
    const own = env.me !== undefined && env.me === username;
    return `<span class="mention${own ? " mention-me" : ""}" data-username="${md.utils.escapeHtml(
      username,
    )}">@${md.utils.escapeHtml(username)}</span>`;
  };
}

function splitMentions(state: StateCore, token: Token): Token[] {
  const text = token.content;
  const parts: Token[] = [];
  let last = 0;
  for (const match of text.matchAll(MENTION)) {
    const username = trimName(match[2]!);
    const start = match.index + match[1]!.length;
    if (start > last) parts.push(textToken(state, text.slice(last, start)));
    const mention = new state.Token("mention", "", 0);
    mention.meta = username;
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
