// When the jobs waiting for their next attempt come due (issue 38): a min-heap of (retryAt,
// job id), earliest first. Entries are never removed in place: one whose job has since been
// SET, REMOVEd or re-timed is found stale when it comes up (the caller compares the job's
// retryAt), so arming costs O(log n) and nothing else has to know about it. A job is armed
// when its retry is decided, and at a start or a take-over from what the store holds.
export interface RetryEntry {
  readonly at: bigint;
  readonly id: string;
}

export class RetryTimers {
  private readonly heap: RetryEntry[] = [];

  get size(): number {
    return this.heap.length;
  }

  arm(id: string, at: bigint): void {
    const h = this.heap;
    h.push({ at, id });
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.at <= h[i]!.at) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  /** The earliest armed instant, if any. */
  next(): bigint | undefined {
    return this.heap[0]?.at;
  }

  /** Takes up to `limit` entries due at `nowNs`, earliest first. */
  takeDue(nowNs: bigint, limit: number): RetryEntry[] {
    const out: RetryEntry[] = [];
    while (out.length < limit && this.heap.length > 0 && this.heap[0]!.at <= nowNs) out.push(this.pop());
    return out;
  }

  clear(): void {
    this.heap.length = 0;
  }

  private pop(): RetryEntry {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l]!.at < h[m]!.at) m = l;
        if (r < h.length && h[r]!.at < h[m]!.at) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}
