/**
 * A token bucket: holds at most `burst` tokens, refilled at `perSecond`; each event takes one.
 * `take()` says whether there was one. Starts full, so a client may send `burst` frames at once
 * (its subscriptions, on connecting) and then `perSecond` on average.
 */
export class TokenBucket {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  take(): boolean {
    const now = this.now();
    this.tokens = Math.min(
      this.burst,
      this.tokens + ((now - this.refilledAt) * this.perSecond) / 1000,
    );
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
