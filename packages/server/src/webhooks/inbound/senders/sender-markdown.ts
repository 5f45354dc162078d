import { NUL } from "../../../chat/content-rules.js";
import { encodeLinkTarget, escapeMarkdown } from "../slack-mrkdwn.js";

/**
 * Small pieces of markdown for the senders' messages. Every value from a payload goes through
 * `text()` (escaped, clipped) or `link()` (only http(s) targets become links), so a title or a
 * commit message shows as typed and never adds markup, links or mentions of its own.
 */

/** Longest text taken from one field (titles, names): a message stays far below 16384 bytes. */
const FIELD_CHARACTERS = 256;

/** `value` as a string, or undefined when it is not a non-empty string. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A number, or undefined. */
export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** An object field, or an empty object (payloads are third-party: any field may be missing). */
export function obj(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** At most `max` characters (code points), with "…" when cut; U+0000 dropped (no post holds it). */
export function clip(value: string, max = FIELD_CHARACTERS): string {
  const points = Array.from(value.split(NUL).join(""));
  return points.length <= max ? value : `${points.slice(0, max - 1).join("")}…`;
}

/** Backslash-escapes inline markdown syntax (the text never starts a line, so # and > stay). */
function escapeInline(value: string): string {
  return value.replace(/[\\`*_~[\]<|]/g, "\\$&");
}

/** Escaped, clipped text on one line, for inside a line. */
export function text(value: string, max = FIELD_CHARACTERS): string {
  return escapeInline(clip(value.replace(/\s+/g, " ").trim(), max));
}

/** Bold text. */
export function bold(value: string): string {
  return `**${text(value)}**`;
}

/** A link to `url` when it is an http(s) URL, else the label alone. */
export function link(label: string, url: unknown): string {
  const target = str(url);
  if (!target || !/^https?:\/\//i.test(target)) return text(label);
  return `[${text(label)}](${encodeLinkTarget(target)})`;
}

/** Inline code, when the value has no backtick (else escaped text). */
export function code(value: string): string {
  const clipped = clip(value.replace(/\s+/g, " "), FIELD_CHARACTERS);
  return clipped.includes("`") ? escapeInline(clipped) : `\`${clipped}\``;
}

/** A quoted block of up to `max` characters of `value`, each line escaped. */
export function quote(value: string, max: number): string {
  return clip(value.replace(/\r\n?/g, "\n").trim(), max)
    .split("\n")
    .map((line) => `> ${escapeMarkdown(line)}`)
    .join("\n");
}
