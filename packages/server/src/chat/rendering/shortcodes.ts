/**
 * Emoji shortcodes (`tada`, `+1`, `white_check_mark`): the names GitHub and Slack users type
 * between colons, from the `gemoji` data package (kept up to date with Unicode; no table written
 * by hand). Pure and free of Node imports, so the chat page's bundle imports it too.
 */
import { nameToEmoji } from "gemoji";

/** The emoji a shortcode name stands for (`tada` → 🎉), or undefined for an unknown name. */
export function emojiForShortcode(name: string): string | undefined {
  return Object.hasOwn(nameToEmoji, name) ? nameToEmoji[name] : undefined;
}

/** `:name:` with a name of the set's characters (lower-case letters, digits, `_`, `+`, `-`). */
const SHORTCODE = /:([a-z0-9_+-]+):/g;

/** Replaces each `:name:` of a known name in plain text by its emoji; unknown ones stay as typed. */
export function replaceShortcodes(text: string): string {
  if (!text.includes(":")) return text;
  return text.replace(SHORTCODE, (whole, name: string) => emojiForShortcode(name) ?? whole);
}
