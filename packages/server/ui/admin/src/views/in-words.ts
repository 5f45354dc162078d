const UNITS: [number, string][] = [
  [86_400_000, "day"],
  [3_600_000, "hour"],
  [60_000, "minute"],
  [1_000, "second"],
];

/**
 * How far `at` is from `now`, in words an operator reads at a glance: "in 4 minutes",
 * "2 hours ago", "now" (within a second). Rounded to the largest unit that fits.
 */
export function inWords(at: number, now = Date.now()): string {
  const gap = at - now;
  const size = Math.abs(gap);
  if (size < 1_000) return "now";
  const [unit, name] = UNITS.find(([ms]) => size >= ms)!;
  const n = Math.round(size / unit);
  const amount = `${n} ${name}${n === 1 ? "" : "s"}`;
  return gap > 0 ? `in ${amount}` : `${amount} ago`;
}
