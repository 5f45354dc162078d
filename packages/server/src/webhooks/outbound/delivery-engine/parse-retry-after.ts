/**
 * asctime's date form (`Sun Nov  6 08:49:37 1994`), one of the three HTTP dates a recipient must
 * read. It names no zone but means UTC; Date.parse would read it as local time.
 */
const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * The wait a `Retry-After` header asks for, in milliseconds from `now`: delta-seconds or an HTTP
 * date (RFC 9110 section 10.2.3; IMF-fixdate and the obsolete RFC 850 and asctime forms). Null
 * when the header is absent or unreadable; 0 for a date in the past.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(ASCTIME.test(text) ? `${text} GMT` : text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}
