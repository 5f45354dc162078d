import { CliError } from "./cli-error.js";

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A point in time for `--since` / `--until`: an ISO 8601 date or date-time
 * (`2026-11-20`, `2026-11-20T08:00:00Z`), or a duration ago (`90s`, `15m`, `12h`, `7d`).
 * Answers the ISO form the API takes.
 */
export function parseTime(value: string, flag: string, now = Date.now()): string {
  const text = value.trim();
  const ago = /^(\d+)\s*([smhd])$/i.exec(text);
  if (ago) return new Date(now - Number(ago[1]) * UNITS[ago[2]!.toLowerCase()]!).toISOString();
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const parsed = Date.parse(text);
    if (!Number.isNaN(parsed)) return new Date(parsed).toISOString();
  }
  throw new CliError(
    `${flag} must be an ISO date or time (2026-11-20T08:00:00Z) or a duration ago (90s, 15m, 12h, 7d); got "${value}"`,
  );
}
