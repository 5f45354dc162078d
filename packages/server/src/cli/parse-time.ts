import { parseInstant } from "../time/parse-instant.js";
import { CliError } from "./cli-error.js";

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A point in time for `--since` / `--until`: an ISO 8601 date (`2026-11-20`, midnight UTC), a
 * date-time as the API takes it (RFC 3339 with a zone: `2026-11-20T08:00:00Z`,
 * `2026-11-20T09:00:00+01:00`; read by the server's own parseInstant, so no leap second and no
 * time without a zone), or a duration ago (`90s`, `15m`, `12h`, `7d`). Answers the ISO form the
 * API takes; a time the API would refuse (a duration reaching before the year 0) is refused here.
 */
export function parseTime(value: string, flag: string, now = Date.now()): string {
  const text = value.trim();
  const ago = /^(\d+)\s*([smhd])$/i.exec(text);
  const at = ago
    ? now - Number(ago[1]) * UNITS[ago[2]!.toLowerCase()]!
    : parseInstant(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  const iso = at !== undefined && Number.isFinite(at) ? toIso(at) : undefined;
  if (iso !== undefined && parseInstant(iso) !== undefined) return iso;
  throw new CliError(
    `${flag} must be an ISO date or time (2026-11-20T08:00:00Z) or a duration ago (90s, 15m, 12h, 7d); got "${value}"`,
  );
}

/** The ISO form of an instant, or undefined past what a Date holds. */
function toIso(at: number): string | undefined {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
