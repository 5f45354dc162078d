import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { parseMarkdown } from "./rendering/render-markdown.js";
import { findMemberUsernames } from "./rooms-repository.js";

/**
 * `@name` where a username may be (usernames: `[a-z0-9][a-z0-9._-]{0,63}`), not inside a word or
 * an address (`ops@example.com`: the character before `@` must not be one a username or a local
 * part could end with).
 */
const MENTION = /(?<![A-Za-z0-9._%+@-])@([A-Za-z0-9][A-Za-z0-9._-]{0,63})/g;

/** The names one `@name` may stand for, most likely first ("@bob." : ["bob.", "bob"]). */
export type MentionCandidate = readonly string[];

/**
 * What `@name`s could mention in markdown content, in order of first appearance: read from the
 * text of the document markdown-it parses (the parser that renders it), so code spans and blocks,
 * link addresses and bare URLs or e-mail addresses do not count. A name ending in `.`, `_` or `-`
 * ("thanks @bob.") may also be the name without them. Content without `@` is not parsed; HTML
 * content has no mentions.
 */
export function mentionCandidates(
  content: string,
  format: "markdown" | "html",
): MentionCandidate[] {
  if (format !== "markdown" || !content.includes("@")) return [];
  const found = new Map<string, MentionCandidate>();
  for (const block of parseMarkdown(content)) {
    if (block.type !== "inline" || !block.children) continue;
    let inBareLink = false;
    for (const token of block.children) {
      if (token.type === "link_open")
        inBareLink = token.markup === "linkify" || token.markup === "autolink";
      else if (token.type === "link_close") inBareLink = false;
      else if (token.type === "text" && !inBareLink && token.content.includes("@")) {
        for (const match of token.content.matchAll(MENTION)) {
          const name = match[1]!.toLowerCase();
          if (found.has(name)) continue;
          const trimmed = name.replace(/[._-]+$/, "");
          found.set(name, trimmed !== name && trimmed !== "" ? [name, trimmed] : [name]);
        }
      }
    }
  }
  return [...found.values()];
}

/**
 * The members of the room that content mentions, in order of first appearance, each once: one
 * query in the caller's transaction (none without candidates).
 */
export async function resolveMentions(
  db: Kysely<Database>,
  roomId: number,
  candidates: readonly MentionCandidate[],
): Promise<string[]> {
  if (candidates.length === 0) return [];
  const members = new Set(await findMemberUsernames(db, roomId, [...new Set(candidates.flat())]));
  const out = new Set<string>();
  for (const names of candidates) {
    const member = names.find((name) => members.has(name));
    if (member !== undefined) out.add(member);
  }
  return [...out];
}
