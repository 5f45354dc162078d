import emojiRegex from "emoji-regex";
import { AppError } from "../errors/app-error.js";
import { emojiForShortcode } from "./rendering/shortcodes.js";

/** Exactly one emoji, as the `emoji-regex` package (Unicode's emoji sequences) knows them. */
const ONE_EMOJI = new RegExp(`^(?:${emojiRegex().source})$`);
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
/** Longer than any emoji sequence Unicode defines (the longest, a family, has 11 code points). */
const MAX_CODE_POINTS = 32;

/**
 * A reaction's `{emoji}` as the URL gave it (already percent-decoded): a shortcode name such as
 * `tada` or `+1` of the built-in set answers its emoji; one Unicode emoji (a single extended
 * grapheme cluster that is an emoji) answers itself. Anything else: 400 invalid_emoji.
 */
export function parseReactionEmoji(raw: string): string {
  const named = emojiForShortcode(raw);
  if (named !== undefined) return named;
  if ([...raw].length <= MAX_CODE_POINTS && ONE_EMOJI.test(raw)) {
    const segments = [...graphemes.segment(raw)];
    if (segments.length === 1) return raw;
  }
  throw new AppError(
    "invalid_emoji",
    `${JSON.stringify(raw.slice(0, 64))} is not one emoji or a known shortcode name`,
  );
}
