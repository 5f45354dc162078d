import { CONTROL_CHARACTER, MAX_CONTENT_BYTES, NUL } from "../../chat/content-rules.js";
import { SlackPayloadError } from "./slack-payload-error.js";
import {
  encodeLinkTarget,
  escapeMarkdown,
  markdownLink,
  slackMrkdwnToMarkdown,
  slackPlainToMarkdown,
} from "./slack-mrkdwn.js";

/** What a Slack incoming-webhook payload becomes: markdown, plus the sender overrides it asked for. */
export interface SlackMessage {
  content: string;
  /** `username`, trimmed; used only when the webhook allows overrides. */
  username?: string;
  /** `icon_url` when it is an absolute http(s) URL; used only when the webhook allows overrides. */
  iconUrl?: string;
}

/** Slack refuses more than 100 attachments per message. */
export const MAX_SLACK_ATTACHMENTS = 100;
const TRUNCATED = "\n\n_… (truncated)_";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Slack is lenient about types: numbers show as text, anything else that is not a string is skipped. */
function str(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() === "" ? undefined : value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function httpUrl(value: unknown): string | undefined {
  const text = str(value)?.trim();
  if (!text || CONTROL_CHARACTER.test(text)) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? text : undefined;
  } catch {
    return undefined;
  }
}

/** A Block Kit text object: `{type: "mrkdwn" | "plain_text", text}`. */
function textObject(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  const text = str(value.text);
  if (text === undefined) return undefined;
  return value.type === "plain_text" ? slackPlainToMarkdown(text) : slackMrkdwnToMarkdown(text);
}

function richTextInline(element: Json): string {
  switch (element.type) {
    case "text": {
      const text = typeof element.text === "string" ? element.text : "";
      const style = isObject(element.style) ? element.style : {};
      // The markers go around the run's words, its leading and trailing spaces outside them:
      // markdown opens `**` only before a non-space and closes it only after one, so
      // `** bold**` would show its asterisks. A run of spaces alone gets no markers.
      const escaped = style.code ? text : escapeMarkdown(text);
      const start = escaped.length - escaped.trimStart().length;
      const end = escaped.trimEnd().length;
      if (end <= start) return escaped;
      const lead = escaped.slice(0, start);
      const trail = escaped.slice(end);
      let out = escaped.slice(start, end);
      if (style.code) return `${lead}\`${out}\`${trail}`;
      if (style.bold) out = `**${out}**`;
      if (style.italic) out = `_${out}_`;
      if (style.strike) out = `~~${out}~~`;
      return lead + out + trail;
    }
    case "link": {
      const url = httpUrl(element.url);
      const label = str(element.text) ?? url ?? "";
      return url ? markdownLink(label, url) : escapeMarkdown(label);
    }
    case "emoji": {
      const points =
        typeof element.unicode === "string" &&
        /^[0-9a-f]{1,6}(?:-[0-9a-f]{1,6})*$/i.test(element.unicode)
          ? element.unicode.split("-").map((hex) => parseInt(hex, 16))
          : [];
      const valid = points.length > 0 && points.every((point) => point > 0 && point <= 0x10ffff);
      return valid ? String.fromCodePoint(...points) : `:${str(element.name) ?? "emoji"}:`;
    }
    case "user":
      return `@${str(element.user_id) ?? "user"}`;
    case "channel":
      return `#${str(element.channel_id) ?? "channel"}`;
    case "usergroup":
      return `@${str(element.usergroup_id) ?? "group"}`;
    case "broadcast":
      return `@${str(element.range) ?? "here"}`;
    default:
      return "";
  }
}

function richTextElement(element: Json): string {
  const inline = () => objects(element.elements).map(richTextInline).join("");
  switch (element.type) {
    case "rich_text_section":
      return inline();
    case "rich_text_preformatted":
      return (
        "```\n" +
        objects(element.elements)
          .map((e) => (typeof e.text === "string" ? e.text : richTextInline(e)))
          .join("") +
        "\n```"
      );
    case "rich_text_quote":
      return inline()
        .split("\n")
        .map((line) => `> ${line}`)
        .join("\n");
    case "rich_text_list": {
      const ordered = element.style === "ordered";
      return objects(element.elements)
        .map((item, i) => `${ordered ? `${i + 1}.` : "-"} ${richTextElement(item)}`)
        .join("\n");
    }
    default:
      return "";
  }
}

/** Best-effort Block Kit: header, section (text, fields), context, divider, image, rich_text, actions. */
function renderBlock(block: Json): string | undefined {
  switch (block.type) {
    case "header": {
      const text = isObject(block.text) ? str(block.text.text) : undefined;
      return text === undefined ? undefined : `### ${escapeMarkdown(text)}`;
    }
    case "section": {
      const parts = [textObject(block.text), ...objects(block.fields).map(textObject)];
      return parts.filter((part) => part !== undefined).join("\n") || undefined;
    }
    case "context":
      return (
        objects(block.elements)
          .map((element) => (element.type === "image" ? undefined : textObject(element)))
          .filter((part) => part !== undefined)
          .join(" · ") || undefined
      );
    case "divider":
      return "---";
    case "image": {
      const url = httpUrl(block.image_url);
      if (!url) return undefined;
      const title = isObject(block.title) ? str(block.title.text) : undefined;
      const alt = (str(block.alt_text) ?? title ?? "image").replace(/[[\]\\]/g, "\\$&");
      return `![${alt}](${encodeLinkTarget(url)})`;
    }
    case "rich_text":
      return objects(block.elements).map(richTextElement).join("\n") || undefined;
    case "actions":
      return (
        objects(block.elements)
          .map((element) => {
            const url = httpUrl(element.url);
            const label = isObject(element.text) ? str(element.text.text) : undefined;
            return url ? markdownLink(label ?? url, url) : undefined;
          })
          .filter((part) => part !== undefined)
          .join(" | ") || undefined
      );
    default:
      return undefined;
  }
}

function renderBlocks(blocks: unknown): string | undefined {
  const parts = objects(blocks)
    .map(renderBlock)
    .filter((part) => part !== undefined && part.trim() !== "");
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

const NAMED_COLORS: Record<string, string> = { good: "🟢", warning: "🟠", danger: "🔴" };

/**
 * Markdown has no colored bars, so an attachment's `color` becomes a leading marker: Slack's names
 * (good, warning, danger) and hex colors by hue (red, orange/yellow, green, blue, purple). Greys and
 * anything unrecognized get no marker.
 */
export function colorMarker(color: unknown): string {
  if (typeof color !== "string") return "";
  const named = NAMED_COLORS[color.toLowerCase()];
  if (named) return named;
  const hex = /^#?([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(color.trim())?.[1];
  if (!hex) return "";
  const full = hex.length === 3 ? [...hex].map((c) => c + c).join("") : hex;
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16) / 255) as [
    number,
    number,
    number,
  ];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const delta = max - min;
  if (delta < 0.15 || max < 0.15) return "";
  let hue =
    max === r ? ((g - b) / delta) % 6 : max === g ? (b - r) / delta + 2 : (r - g) / delta + 4;
  hue = (hue * 60 + 360) % 360;
  if (hue < 15 || hue >= 330) return "🔴";
  if (hue < 70) return "🟠";
  if (hue < 170) return "🟢";
  if (hue < 260) return "🔵";
  return "🟣";
}

/** Text fields of attachments are formatted as mrkdwn (Slack's `mrkdwn_in` is not consulted). */
function renderAttachment(attachment: Json): string | undefined {
  const lines: string[] = [];
  let marker = colorMarker(attachment.color);
  const lead = (line: string) => {
    const out = marker ? `${marker} ${line}` : line;
    marker = "";
    return out;
  };
  const pretext = str(attachment.pretext);
  if (pretext) lines.push(slackMrkdwnToMarkdown(pretext));
  const author = str(attachment.author_name);
  if (author) {
    const link = httpUrl(attachment.author_link);
    lines.push(link ? `_${markdownLink(author, link)}_` : `_${slackPlainToMarkdown(author)}_`);
  }
  const title = str(attachment.title);
  if (title) {
    const link = httpUrl(attachment.title_link);
    lines.push(lead(`**${link ? markdownLink(title, link) : slackPlainToMarkdown(title)}**`));
  }
  const text = str(attachment.text);
  if (text) lines.push(lead(slackMrkdwnToMarkdown(text)));
  for (const field of objects(attachment.fields)) {
    const fieldTitle = str(field.title);
    const value = str(field.value);
    if (fieldTitle === undefined && value === undefined) continue;
    const shownValue = value === undefined ? "" : slackMrkdwnToMarkdown(value);
    lines.push(
      lead(
        fieldTitle === undefined
          ? shownValue
          : `**${slackPlainToMarkdown(fieldTitle)}**: ${shownValue}`,
      ),
    );
  }
  const blocks = renderBlocks(attachment.blocks);
  if (blocks) lines.push(lead(blocks));
  const image = httpUrl(attachment.image_url);
  if (image) lines.push(`![](${encodeLinkTarget(image)})`);
  const footer = str(attachment.footer);
  if (footer) lines.push(`_${slackMrkdwnToMarkdown(footer)}_`);
  // Only an attachment with nothing else to show falls back to its plain-text summary.
  if (lines.length === 0) {
    const fallback = str(attachment.fallback);
    if (fallback) lines.push(lead(slackPlainToMarkdown(fallback)));
  }
  return lines.length > 0 ? lines.join("\n") : undefined;
}

/** Cuts at a UTF-8 character boundary so the result, marker included, fits `maxBytes`. */
function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes - Buffer.byteLength(TRUNCATED, "utf8");
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8") + TRUNCATED;
}

/**
 * Renders a Slack incoming-webhook payload to one markdown message: `blocks` when they render to
 * something (then `text` is only Slack's notification fallback), else `text`; then each attachment.
 * Like Slack, an over-long message is truncated rather than refused.
 */
export function slackPayloadToMessage(payload: unknown): SlackMessage {
  if (!isObject(payload))
    throw new SlackPayloadError("invalid_payload", "the payload must be a JSON object");
  if (Array.isArray(payload.attachments) && payload.attachments.length > MAX_SLACK_ATTACHMENTS) {
    throw new SlackPayloadError(
      "too_many_attachments",
      `at most ${MAX_SLACK_ATTACHMENTS} attachments`,
    );
  }
  const parts: string[] = [];
  const blocks = renderBlocks(payload.blocks);
  const text = str(payload.text);
  if (blocks) parts.push(blocks);
  else if (text)
    parts.push(payload.mrkdwn === false ? slackPlainToMarkdown(text) : slackMrkdwnToMarkdown(text));
  for (const attachment of objects(payload.attachments)) {
    const rendered = renderAttachment(attachment);
    if (rendered) parts.push(rendered);
  }
  // Like Slack, lenient: a NUL (which the content rules refuse) is dropped, not answered with 400.
  const content = parts.join("\n\n").replaceAll(NUL, "");
  if (content.trim() === "")
    throw new SlackPayloadError(
      "no_text",
      "the payload has no text, blocks or attachments to show",
    );

  const message: SlackMessage = { content: truncateUtf8(content, MAX_CONTENT_BYTES) };
  const username = str(payload.username)?.replaceAll(NUL, "").trim();
  if (username) message.username = [...username].slice(0, 200).join("");
  const iconUrl = httpUrl(payload.icon_url);
  if (iconUrl) message.iconUrl = iconUrl;
  return message;
}
