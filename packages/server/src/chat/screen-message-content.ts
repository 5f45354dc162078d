import type { AppContext } from "../app-context.js";
import { AppError } from "../errors/app-error.js";
import { scanForDlp } from "../safety/dlp/scan-for-dlp.js";
import {
  decideModeration,
  type ModerationBand,
  type ModerationStatus,
} from "../safety/moderation/moderation-decision.js";
import { validateMessageContent } from "./content-rules.js";
import { renderMessage, type ContentFormat } from "./rendering/render-message.js";
import { sanitizeHtml } from "./rendering/sanitize-html.js";

/** What AI moderation decided about a message's content (null when it let it through). */
export interface ModerationOutcome {
  category: string;
  score: number;
  band: ModerationBand;
  status: ModerationStatus;
}

/** Content that passed every check, as it is stored, and what moderation made of it. */
export interface ScreenedContent {
  /** As stored: markdown as sent, HTML sanitized. */
  stored: string;
  format: ContentFormat;
  /** The plain text a reader sees (the API's contentText): what search indexes. */
  text: string;
  moderation: ModerationOutcome | null;
}

/** The text without its http(s) links (what moderation reads of a formatter's message). */
function withoutLinks(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s<>"')\]]+/gi, "");
}

/** The plain text readers will see; content that cannot be rendered is refused (400), not stored. */
function renderOrRefuse(stored: string, format: ContentFormat): string {
  try {
    return renderMessage(stored, format).text;
  } catch {
    throw new AppError("content_not_renderable", "the content could not be rendered");
  }
}

/**
 * Classifies the text a reader sees and, when it differs, the raw input too; the higher score
 * decides, so neither markup that splits a word nor markup that joins one slips past.
 */
async function moderate(
  ctx: AppContext,
  readerText: string,
  raw: string,
): Promise<ModerationOutcome | null> {
  const classifier = ctx.safety.classifier;
  if (!classifier) return null;
  try {
    const results = await Promise.all(
      readerText === raw
        ? [classifier.classify(raw)]
        : [readerText, raw].map((text) => classifier.classify(text)),
    );
    const result = results.reduce((a, b) => (b.score > a.score ? b : a));
    const decision = decideModeration(result, ctx.safety.thresholds);
    return decision ? { category: result.category, score: result.score, ...decision } : null;
  } catch {
    // The classifier is advisory: when its provider is down, messages still flow (fail open).
    return null;
  }
}

/**
 * The checks every message content goes through, posted or edited, on every path (members,
 * ingest, anything calling postMessage() or editMessage()): the content rules, HTML sanitization,
 * rendering, DLP on the raw input and on the rendered text (blocked content is never stored:
 * 422 dlp_blocked), and AI moderation on both. One function, so an edit cannot carry what a post
 * could not. Runs outside any transaction: a remote classifier must not hold a connection.
 */
export async function screenMessageContent(
  ctx: AppContext,
  content: unknown,
  contentFormat: unknown,
  options: {
    /**
     * The links are Parley's own, written by a formatter from a sender's event (the GitHub and
     * Stripe routes link every commit, pull request or payment they describe): moderation reads
     * the message without them, so a push of many commits is not taken for a wall of spam links.
     * The words around them (commit messages, titles) are still read.
     */
    composedLinks?: boolean;
  } = {},
): Promise<ScreenedContent> {
  const valid = validateMessageContent(content, contentFormat);
  const format = valid.format;
  const stored = format === "html" ? sanitizeHtml(valid.content) : valid.content;
  // What a reader sees: entities decoded, markup and markdown gone. DLP and moderation read it as
  // well as the raw input, so "&#52;111 1111 1111 1111" or "4111 1111 1111 111**1**" is the card
  // number it shows, and "k**i**ll" the word it shows.
  const readerText = renderOrRefuse(stored, format);
  const match =
    scanForDlp(ctx.safety.dlp, valid.content) ??
    (readerText === valid.content ? null : scanForDlp(ctx.safety.dlp, readerText));
  if (match) {
    throw new AppError(
      "dlp_blocked",
      `the message matches the DLP rule "${match.ruleId}" (${match.description})`,
      {
        ruleId: match.ruleId,
      },
    );
  }
  const moderation = options.composedLinks
    ? await moderate(ctx, withoutLinks(readerText), withoutLinks(valid.content))
    : await moderate(ctx, readerText, valid.content);
  return { stored, format, text: readerText, moderation };
}
