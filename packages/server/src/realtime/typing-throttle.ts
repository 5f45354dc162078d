/**
 * At most one typing notice per `intervalMs` for each key (a user and a room): the first passes,
 * the others within the interval are dropped. Keys older than the interval are forgotten as the
 * map grows, so it holds only the people typing now.
 */
export class TypingThrottle {
  private readonly last = new Map<string, number>();

  constructor(private readonly intervalMs: number) {}

  /** True when a notice for `key` may go out at `now` (and counts it). */
  allow(key: string, now: number): boolean {
    const previous = this.last.get(key);
    if (previous !== undefined && now - previous < this.intervalMs) return false;
    this.last.set(key, now);
    if (this.last.size > 10_000) this.forgetBefore(now - this.intervalMs);
    return true;
  }

  private forgetBefore(cutoff: number): void {
    for (const [key, at] of this.last) if (at <= cutoff) this.last.delete(key);
  }
}
