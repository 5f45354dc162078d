/**
 * The wait a `Retry-After` header asks for, in milliseconds from `now`: delta-seconds or an HTTP
 * date (RFC 9110 section 10.2.3). Null when the header is absent or unreadable; 0 for a date in
 * the past.
 */
export function retryAfterMs(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}
