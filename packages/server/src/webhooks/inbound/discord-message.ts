import { CONTROL_CHARACTER } from "../../chat/content-rules.js";
import { emptyMessage, type FieldError, invalidFormBody } from "./discord-api-error.js";
import { colorMarker } from "./slack-message.js";
import { encodeLinkTarget, escapeMarkdown, markdownLink } from "./slack-mrkdwn.js";

/** Discord refuses more than 10 embeds per message and more than 25 fields per embed. */
export const MAX_DISCORD_EMBEDS = 10;
export const MAX_DISCORD_EMBED_FIELDS = 25;
/** Parley's display names are at most 200 characters; Discord's usernames, 80. */
const MAX_USERNAME_CHARACTERS = 200;

/** What a Discord Execute Webhook or Edit Webhook Message body becomes. */
export interface DiscordMessageInput {
  /** The content and embeds as one markdown message; undefined on an edit that changes neither. */
  content: string | undefined;
  /** `username`, trimmed; used only when the webhook allows overrides. */
  username?: string;
  /** `avatar_url`, an absolute http(s) URL; used only when the webhook allows overrides. */
  avatarUrl?: string;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Collects every field that fails, so one answer names them all (as Discord's does). */
class FieldErrors {
  readonly list: FieldError[] = [];
  add(path: ReadonlyArray<string | number>, code: string, message: string): void {
    this.list.push({ path, code, message });
  }
  /** A string field, absent or null allowed; anything else is recorded and read as absent. */
  text(object: Json, key: string, path: ReadonlyArray<string | number>): string | undefined {
    const value = object[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "string") return value;
    this.add([...path, key], "BASE_TYPE_STRING", "Must be a string.");
    return undefined;
  }
  /** An absolute http(s) URL (attachment:// and others are not something Parley can show). */
  url(object: Json, key: string, path: ReadonlyArray<string | number>): string | undefined {
    const text = this.text(object, key, path)?.trim();
    if (text === undefined || text === "") return undefined;
    if (!CONTROL_CHARACTER.test(text)) {
      try {
        const url = new URL(text);
        if (url.protocol === "http:" || url.protocol === "https:") return text;
      } catch {
        // reported below
      }
    }
    this.add([...path, key], "URL_TYPE_INVALID_URL", "Not a well formed URL.");
    return undefined;
  }
}

/** Discord colors are integers (0xRRGGBB); the marker is the one Slack attachments get. */
function embedColorMarker(color: unknown): string {
  if (typeof color !== "number" || !Number.isInteger(color) || color < 0 || color > 0xffffff)
    return "";
  return colorMarker(`#${color.toString(16).padStart(6, "0")}`);
}

/**
 * One embed as markdown: author, title (linked to `url`), description, fields, image, then footer
 * and timestamp on one line. Description, field values and footer are Discord markdown, which
 * Parley's markdown reads the same way; names and titles are shown as typed.
 */
function renderEmbed(embed: unknown, index: number, errors: FieldErrors): string | undefined {
  const path = ["embeds", index];
  if (!isObject(embed)) {
    errors.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType");
    return undefined;
  }
  const lines: string[] = [];
  let marker = embedColorMarker(embed.color);
  const lead = (line: string) => {
    const out = marker ? `${marker} ${line}` : line;
    marker = "";
    return out;
  };

  if (embed.author !== undefined && embed.author !== null) {
    if (!isObject(embed.author))
      errors.add([...path, "author"], "MODEL_TYPE_CONVERT", "Must be an object.");
    else {
      const name = errors.text(embed.author, "name", [...path, "author"])?.trim();
      const link = errors.url(embed.author, "url", [...path, "author"]);
      if (name) lines.push(`_${link ? markdownLink(name, link) : escapeMarkdown(name)}_`);
    }
  }
  const title = errors.text(embed, "title", path)?.trim();
  const link = errors.url(embed, "url", path);
  if (title) lines.push(lead(`**${link ? markdownLink(title, link) : escapeMarkdown(title)}**`));
  else if (link) lines.push(lead(`<${link}>`));
  const description = errors.text(embed, "description", path);
  if (description?.trim()) lines.push(lead(description));

  if (embed.fields !== undefined && embed.fields !== null) {
    if (!Array.isArray(embed.fields))
      errors.add([...path, "fields"], "BASE_TYPE_LIST", "Must be an array.");
    else if (embed.fields.length > MAX_DISCORD_EMBED_FIELDS)
      errors.add(
        [...path, "fields"],
        "BASE_TYPE_MAX_LENGTH",
        `Must be ${MAX_DISCORD_EMBED_FIELDS} or fewer in length.`,
      );
    else
      embed.fields.forEach((field: unknown, i) => {
        const fieldPath = [...path, "fields", i];
        if (!isObject(field)) {
          errors.add(fieldPath, "MODEL_TYPE_CONVERT", "Must be an object.");
          return;
        }
        const name = errors.text(field, "name", fieldPath);
        const value = errors.text(field, "value", fieldPath);
        // Discord requires both; an empty one shows nothing there either.
        if (name === undefined)
          errors.add([...fieldPath, "name"], "BASE_TYPE_REQUIRED", "This field is required");
        if (value === undefined)
          errors.add([...fieldPath, "value"], "BASE_TYPE_REQUIRED", "This field is required");
        if (name === undefined || value === undefined) return;
        const shownName = name.trim() ? `**${escapeMarkdown(name.trim())}**` : "";
        lines.push(
          lead([shownName, value.trim()].filter(Boolean).join(field.inline === true ? ": " : "\n")),
        );
      });
  }

  if (isObject(embed.image)) {
    const image = errors.url(embed.image, "url", [...path, "image"]);
    if (image) lines.push(`![](${encodeLinkTarget(image)})`);
  }

  const footerParts: string[] = [];
  if (embed.footer !== undefined && embed.footer !== null) {
    if (!isObject(embed.footer))
      errors.add([...path, "footer"], "MODEL_TYPE_CONVERT", "Must be an object.");
    else {
      const text = errors.text(embed.footer, "text", [...path, "footer"])?.trim();
      if (text) footerParts.push(escapeMarkdown(text));
    }
  }
  const timestamp = errors.text(embed, "timestamp", path);
  if (timestamp !== undefined) {
    const at = Date.parse(timestamp);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(timestamp) || Number.isNaN(at))
      errors.add(
        [...path, "timestamp"],
        "DATE_TYPE_PARSE",
        `Could not parse ${timestamp}. Should be ISO8601.`,
      );
    else footerParts.push(new Date(at).toISOString());
  }
  if (footerParts.length > 0) lines.push(`_${footerParts.join(" · ")}_`);
  return lines.length > 0 ? lines.join("\n") : undefined;
}

function renderEmbeds(embeds: unknown, errors: FieldErrors): string[] {
  if (embeds === undefined || embeds === null) return [];
  if (!Array.isArray(embeds)) {
    errors.add(["embeds"], "BASE_TYPE_LIST", "Must be an array.");
    return [];
  }
  if (embeds.length > MAX_DISCORD_EMBEDS) {
    errors.add(
      ["embeds"],
      "BASE_TYPE_MAX_LENGTH",
      `Must be ${MAX_DISCORD_EMBEDS} or fewer in length.`,
    );
    return [];
  }
  return embeds
    .map((embed, i) => renderEmbed(embed, i, errors))
    .filter((part): part is string => part !== undefined);
}

/** `allowed_mentions` is checked for shape; Parley's mentions are `@username` in the text. */
function checkAllowedMentions(value: unknown, errors: FieldErrors): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) {
    errors.add(["allowed_mentions"], "MODEL_TYPE_CONVERT", "Must be an object.");
    return;
  }
  for (const key of ["parse", "users", "roles"]) {
    const list = value[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list) || !list.every((item) => typeof item === "string"))
      errors.add(["allowed_mentions", key], "BASE_TYPE_LIST", "Must be a list of strings.");
  }
}

/**
 * Reads a Discord Execute Webhook body (or, with `edit`, an Edit Webhook Message body): `content`
 * then each embed, rendered to one markdown message. Throws 50035 Invalid Form Body naming every
 * field of the wrong type, 50006 when nothing would show. Unknown fields are ignored, as Discord's
 * own unknown fields are. The content rules (size, NUL) are the caller's, through postMessage().
 */
export function discordPayloadToMessage(
  payload: unknown,
  options: { edit?: boolean } = {},
): DiscordMessageInput {
  if (!isObject(payload))
    throw invalidFormBody({
      path: [],
      code: "DICT_TYPE_CONVERT",
      message: "Only dictionaries may be used in a DictType",
    });
  const errors = new FieldErrors();
  const content = errors.text(payload, "content", []);
  const embeds = renderEmbeds(payload.embeds, errors);
  checkAllowedMentions(payload.allowed_mentions, errors);
  const username = options.edit ? undefined : errors.text(payload, "username", [])?.trim();
  const avatarUrl = options.edit ? undefined : errors.url(payload, "avatar_url", []);
  if (errors.list.length > 0) throw invalidFormBody(...errors.list);

  const parts = [content, ...embeds].filter((part) => part !== undefined && part.trim() !== "");
  const changes = !options.edit || "content" in payload || "embeds" in payload;
  if (!changes) return { content: undefined };
  if (parts.length === 0) throw emptyMessage();
  const message: DiscordMessageInput = { content: parts.join("\n\n") };
  if (username) message.username = [...username].slice(0, MAX_USERNAME_CHARACTERS).join("");
  if (avatarUrl) message.avatarUrl = avatarUrl;
  return message;
}
