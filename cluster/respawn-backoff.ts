// When to replace a worker that died: at once the first time, then after exponentially longer
// waits (100 ms doubling to 5 s) while replacements keep dying, back to 100 ms once a worker
// has lived STABLE_AFTER_MS. A crash loop cannot spin the CPU; a one-off crash is mended at once.
export const BACKOFF_MIN_MS = 100;
export const BACKOFF_MAX_MS = 5000;
export const STABLE_AFTER_MS = 10_000;

export class RespawnBackoff {
  private backoff = BACKOFF_MIN_MS;

  /** The wait before replacing a worker that lived `livedMs`. */
  next(livedMs: number): number {
    if (livedMs > STABLE_AFTER_MS) this.backoff = BACKOFF_MIN_MS;
    const delay = this.backoff;
    this.backoff = Math.min(BACKOFF_MAX_MS, this.backoff * 2);
    return delay;
  }
}
