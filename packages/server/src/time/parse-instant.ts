/**
 * An RFC 3339 date-time (`2026-11-20T08:00:00Z`, `2026-11-20T09:00:00.5+01:00`): a four-digit year,
 * `T` (or `t`, or one space), a zone `Z` (or `z`) or `±hh:mm`. Not `±hh` nor `±hhmm`, which
 * ajv-formats' `date-time` lets through: RFC 3339 has neither, and Date.parse reads `+01` as NaN.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * The instants of the years 0 to 9999 in UTC: those whose ISO form (`toISOString`, how Parley
 * writes every time) is an RFC 3339 date-time again. An offset that pushes a time past either end
 * (`0000-01-01T00:00:00+01:00`) names none.
 */
const FIRST_INSTANT = Date.parse("0000-01-01T00:00:00.000Z");
const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/**
 * The instant (epoch milliseconds) an RFC 3339 date-time names, or undefined when it names none
 * that Parley can store: not that form, a day the month does not have, a leap second (`23:59:60`,
 * which RFC 3339 allows but epoch time, JavaScript's and the database's, cannot hold), or a time
 * outside the years 0 to 9999 in UTC. Digits past the milliseconds are dropped. Every time a
 * request may carry is checked by this (the `date-time` format of the request validator) and read
 * by it, so what passed the check is always a finite number: never `NaN` on its way to a query.
 */
export function parseInstant(text: string): number | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const days = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
  if (days === undefined || day < 1 || day > days) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const offsetHours = match[9] === undefined ? 0 : Number(match[9]);
  const offsetMinutes = match[10] === undefined ? 0 : Number(match[10]);
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const millis = match[7] === undefined ? 0 : Number(match[7].slice(0, 3).padEnd(3, "0"));
  const local = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, millis);
  const sign = match[8] === "-" ? -1 : 1;
  const instant = local.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  return instant >= FIRST_INSTANT && instant <= LAST_INSTANT ? instant : undefined;
}
