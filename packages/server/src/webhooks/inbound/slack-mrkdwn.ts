/**
 * Slack "mrkdwn" to Parley markdown, for the simple cases tools actually send: *bold*, _italic_,
 * ~strike~, `code`, ```blocks```, <url|label> links, <!here>-style mentions and the three HTML
 * entities Slack requires senders to escape. Anything else passes through as text.
 */

const ENTITIES: Record<string, string> = { "&lt;": "<", "&gt;": ">", "&amp;": "&" };

export function decodeSlackEntities(text: string): string {
  return text.replace(/&(?:lt|gt|amp);/g, (entity) => ENTITIES[entity]!);
}

/** Backslash-escapes markdown syntax so plain text shows as typed. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_~[\]<|]/g, "\\$&").replace(/^(\s{0,3})([#>])/gm, "$1\\$2");
}

/** Spaces and parentheses would end a markdown link target early: percent-encode them. */
export function encodeLinkTarget(url: string): string {
  return url.replace(/[\s()]/g, (c) =>
    c === "(" ? "%28" : c === ")" ? "%29" : encodeURIComponent(c),
  );
}

/** A markdown link whose URL cannot end early at a space or parenthesis. */
export function markdownLink(label: string, url: string): string {
  return `[${label.replace(/[[\]\\]/g, "\\$&")}](${encodeLinkTarget(url)})`;
}

const URL_LIKE = /^(?:https?|mailto|ftp):/i;

/** One `<...>` token: a link, a user/channel mention or a special command. */
function convertAngleToken(inner: string): string {
  const bar = inner.indexOf("|");
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? undefined : decodeSlackEntities(inner.slice(bar + 1));
  switch (target[0]) {
    case "!": {
      const command = target.slice(1).split("^")[0]!;
      if (command === "here" || command === "channel" || command === "everyone")
        return `@${command}`;
      // <!subteam^ID|@team>, <!date^1392734382^{date}|fallback>: the label is what Slack shows.
      return label ?? "";
    }
    case "@":
      return label ? (label.startsWith("@") ? label : `@${label}`) : target;
    case "#":
      return label ? (label.startsWith("#") ? label : `#${label}`) : target;
  }
  const url = decodeSlackEntities(target);
  if (!URL_LIKE.test(url)) return decodeSlackEntities(`<${inner}>`);
  return label === undefined ? `<${url}>` : markdownLink(label, url);
}

// *bold* and ~strike~ open after a non-word character and close before one, as in Slack.
const BOLD = /(^|[^\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])/g;
const STRIKE = /(^|[^\w~])~(?=[^\s~])([^~\n]*?[^\s~])~(?![\w~])/g;
// Slack has no headings: a line starting with "#" is text ("# of alerts"), not an <h1>.
const LEADING_HASH = /^(\s{0,3})#/gm;

// A private-use character marks where a converted link sits while the rest is formatted.
const MARK = "\uE000";
const PLACEHOLDER = /\uE000(\d+)\uE000/g;

function convertProse(text: string): string {
  // Links and mentions are converted first and set aside, so *, _ and ~ inside URLs stay literal.
  const tokens: string[] = [];
  const withPlaceholders = text
    .replaceAll(MARK, "")
    .replace(/<([^<>\n]+)>/g, (_m, inner: string) => {
      tokens.push(convertAngleToken(inner));
      return `${MARK}${tokens.length - 1}${MARK}`;
    });
  return decodeSlackEntities(
    withPlaceholders
      .replace(LEADING_HASH, "$1\\#")
      .replace(BOLD, "$1**$2**")
      .replace(STRIKE, "$1~~$2~~"),
  ).replace(PLACEHOLDER, (_m, index: string) => tokens[Number(index)]!);
}

// Code is copied verbatim (entities decoded): ```fenced``` first, then `inline`.
const CODE = /```[\s\S]*?```|`[^`\n]+`/g;

export function slackMrkdwnToMarkdown(text: string): string {
  let out = "";
  let last = 0;
  for (const match of text.matchAll(CODE)) {
    out += convertProse(text.slice(last, match.index));
    let code = decodeSlackEntities(match[0]);
    // Slack allows ```text``` on one line; markdown needs the fences on their own lines.
    if (code.startsWith("```") && !code.startsWith("```\n")) code = "```\n" + code.slice(3);
    if (code.startsWith("```") && !code.endsWith("\n```")) code = code.slice(0, -3) + "\n```";
    out += code;
    last = match.index + match[0].length;
  }
  return out + convertProse(text.slice(last));
}

/** Plain text (`mrkdwn: false`, `plain_text` objects): links still resolve, nothing else formats. */
export function slackPlainToMarkdown(text: string): string {
  let out = "";
  let last = 0;
  for (const match of text.matchAll(/<([^<>\n]+)>/g)) {
    out += escapeMarkdown(decodeSlackEntities(text.slice(last, match.index)));
    out += convertAngleToken(match[1]!);
    last = match.index + match[0].length;
  }
  return out + escapeMarkdown(decodeSlackEntities(text.slice(last)));
}
