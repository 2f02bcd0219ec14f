// A rule's rate limit (issue 38: `"rate": {"limit": N, "per": "1s"}`): never more than `limit`
// starts in any window of length `per`, a sliding window, so there is no double burst at a
// window's boundary (what a receiver with a rate limit of its own needs).
//
// Theory: keep the times of the last `limit` starts in a ring. A start at `now` is allowed iff
// the oldest of them (the limit-th most recent) is at or before now - per, that is, fewer than
// `limit` starts lie in (now - per, now]; otherwise the next start may come at oldest + per.
// Exact, O(1) per start, O(limit) memory; times are the caller's (monotonic nanoseconds), so a
// wall clock that steps does not open or shut the window. (Not wired in yet: issue 38's next
// steps hold jobs over a rule's limits here.)

export class RateWindow {
  readonly limit: number;
  readonly perNs: bigint;
  private readonly starts: BigInt64Array;
  /** How many starts the ring holds (at most `limit`), and where the oldest is. */
  private count = 0;
  private oldest = 0;

  constructor(limit: number, perNs: bigint) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`rate limit ${limit} is not a positive integer`);
    if (perNs <= 0n) throw new RangeError(`rate window ${perNs} ns is not positive`);
    this.limit = limit;
    this.perNs = perNs;
    this.starts = new BigInt64Array(limit);
  }

  /** The first instant at or after `nowNs` a start is allowed. */
  freeAt(nowNs: bigint): bigint {
    if (this.count < this.limit) return nowNs;
    const at = this.starts[this.oldest]! + this.perNs;
    return at > nowNs ? at : nowNs;
  }

  /** Records a start at `nowNs`; false (nothing recorded) when it would exceed the limit. */
  tryStart(nowNs: bigint): boolean {
    if (this.freeAt(nowNs) > nowNs) return false;
    if (this.count < this.limit) {
      this.starts[(this.oldest + this.count) % this.limit] = nowNs;
      this.count++;
    } else {
      this.starts[this.oldest] = nowNs;
      this.oldest = (this.oldest + 1) % this.limit;
    }
    return true;
  }
}
