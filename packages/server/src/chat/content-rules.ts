import { AppError } from "../errors/app-error.js";
import type { ContentFormat } from "./rendering/render-message.js";

/**
 * What a message may hold, for every path that posts one: members (`POST .../messages`), inbound
 * ingest (JSON and the Slack form) and anything calling postMessage() directly. One module, so the
 * paths cannot drift apart; docs/chat-api.md and docs/inbound-webhooks.md describe these rules.
 *
 * - `content`: a string of 1..16384 bytes counted in UTF-8 (docs/chat-api.md), not characters.
 * - `contentFormat`: `markdown` (default) or `html`.
 * - U+0000 (NUL) is refused: PostgreSQL text cannot hold it, and a message must not be storable
 *   on one database and not the other. Other control characters (tab, newline, the ESC of
 *   terminal colours pasted from a CI log) are kept as sent: they are valid text on both
 *   databases, and the HTML and text representations escape whatever a message holds.
 * - Control characters are refused in URLs (see `CONTROL_CHARACTER`), where they have no meaning.
 */
export const MAX_CONTENT_BYTES = 16_384;

export const CONTENT_FORMATS = ["markdown", "html"] as const satisfies readonly ContentFormat[];

export const NUL = "\u0000";

/** C0 control characters and DEL: never part of a URL or a file name. */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export interface MessageContent {
  content: string;
  format: ContentFormat;
}

/** The problem for a string holding NUL, naming the field (`body.content`) like a schema error. */
export function nulCharacterError(field: string): AppError {
  return new AppError("validation_failed", `${field} must not contain the NUL character (U+0000)`, {
    field,
  });
}

/**
 * Checks `content` and `contentFormat` as received (any JSON value) and returns them typed.
 * The format is checked first, so `{"contentFormat": "rtf"}` answers invalid_content_format.
 */
export function validateMessageContent(content: unknown, contentFormat: unknown): MessageContent {
  if (
    contentFormat !== undefined &&
    !(CONTENT_FORMATS as readonly unknown[]).includes(contentFormat)
  ) {
    throw new AppError("invalid_content_format", 'contentFormat must be "markdown" or "html"');
  }
  if (typeof content !== "string" || content.length === 0) {
    throw new AppError("content_required", "content must be a non-empty string");
  }
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes > MAX_CONTENT_BYTES) {
    throw new AppError(
      "content_too_large",
      `content is ${bytes} UTF-8 bytes; the limit is ${MAX_CONTENT_BYTES}`,
      { limit: MAX_CONTENT_BYTES, size: bytes },
    );
  }
  if (content.includes(NUL)) throw nulCharacterError("body.content");
  return { content, format: (contentFormat ?? "markdown") as ContentFormat };
}

/**
 * The message a request body carries (`{content, contentFormat?}`): no body at all answers
 * content_required, a JSON value that is not an object validation_failed, the rest as above.
 * Other fields are not looked at: whether they are refused is the route's choice.
 */
export function validateMessageBody(body: unknown): MessageContent {
  if (body === undefined)
    throw new AppError("content_required", 'send a JSON body such as {"content": "..."}');
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new AppError(
      "validation_failed",
      'the body must be a JSON object such as {"content": "..."}',
      { field: "body" },
    );
  }
  const fields = body as { content?: unknown; contentFormat?: unknown };
  return validateMessageContent(fields.content, fields.contentFormat);
}
