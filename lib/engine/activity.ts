// The activity ring (GET /activity, tickd-protocol(7) HTTP INTERFACE): per wall-clock second of
// the last ACTIVITY_SECONDS, how many due jobs fired, how many executions finished executed or
// failed, and the median and greatest lateness of the runners started in that second.
//
// Invariants:
// - Bounded: ACTIVITY_SECONDS slots, each with at most LATENESS_SAMPLES lateness samples (a
//   uniform reservoir sample of the second's starts: exact median up to that many starts per
//   second, an estimate beyond), so about 600 KiB whatever the load. The maximum is exact.
// - Recording is O(1). A slot is reused for a later second by resetting it first, so a
//   snapshot never shows counts of a second outside its window; seconds with no activity are
//   zeros. A completed second's median is computed once and cached.
// - Times are epoch milliseconds given by the caller (the tick's and the pool's wall clock).
import type { ActivityBucket, ActivityView } from '../domain/activity.ts';

export const ACTIVITY_SECONDS = 300;
export const LATENESS_SAMPLES = 256;
const INTERVAL_MS = 1000;

export class ActivityRing {
  readonly seconds: number;
  readonly samples: number;
  private readonly random: () => number;
  private readonly second: Float64Array;
  private readonly fired: Uint32Array;
  private readonly executed: Uint32Array;
  private readonly failed: Uint32Array;
  /** Lateness samples seen in the slot's second (the reservoir holds min(seen, samples)). */
  private readonly seen: Uint32Array;
  private readonly max: Float64Array;
  private readonly reservoir: Float64Array;
  private readonly median: Float64Array;
  private readonly medianValid: Uint8Array;

  constructor(seconds = ACTIVITY_SECONDS, samples = LATENESS_SAMPLES, random: () => number = Math.random) {
    this.seconds = seconds;
    this.samples = samples;
    this.random = random;
    this.second = new Float64Array(seconds).fill(-1);
    this.fired = new Uint32Array(seconds);
    this.executed = new Uint32Array(seconds);
    this.failed = new Uint32Array(seconds);
    this.seen = new Uint32Array(seconds);
    this.max = new Float64Array(seconds);
    this.reservoir = new Float64Array(seconds * samples);
    this.median = new Float64Array(seconds);
    this.medianValid = new Uint8Array(seconds);
  }

  /** A due job taken by the scheduler at `nowMs`. */
  recordFired(nowMs: number): void {
    this.fired[this.slot(nowMs)]!++;
  }

  /** An execution finished (or a due job no rule matched: failed) at `nowMs`. */
  recordFinished(nowMs: number, success: boolean): void {
    const s = this.slot(nowMs);
    if (success) this.executed[s]!++;
    else this.failed[s]!++;
  }

  /** A runner started (or a job no rule matched fired) at `nowMs`, `latenessMs` late. */
  recordLateness(nowMs: number, latenessMs: number): void {
    if (!Number.isFinite(latenessMs)) return;
    const s = this.slot(nowMs);
    const n = this.seen[s]!;
    this.seen[s] = n + 1;
    if (n === 0 || latenessMs > this.max[s]!) this.max[s] = latenessMs;
    // Reservoir sampling (Algorithm R): every sample of the second is kept with equal chance.
    const at = n < this.samples ? n : Math.floor(this.random() * (n + 1));
    if (at < this.samples) {
      this.reservoir[s * this.samples + at] = latenessMs;
      this.medianValid[s] = 0;
    }
  }

  /** The window ending with the second of `nowMs`, oldest first. */
  snapshot(nowMs: number): ActivityView {
    const current = Math.floor(nowMs / INTERVAL_MS);
    const buckets: ActivityBucket[] = [];
    for (let sec = current - this.seconds + 1; sec <= current; sec++) {
      const s = mod(sec, this.seconds);
      const atMs = sec * INTERVAL_MS;
      if (this.second[s] !== sec) {
        buckets.push({ atMs, fired: 0, executed: 0, failed: 0, latenessP50Ms: null, latenessMaxMs: null });
        continue;
      }
      const any = this.seen[s]! > 0;
      buckets.push({
        atMs,
        fired: this.fired[s]!,
        executed: this.executed[s]!,
        failed: this.failed[s]!,
        latenessP50Ms: any ? this.medianOf(s) : null,
        latenessMaxMs: any ? this.max[s]! : null,
      });
    }
    return { intervalMs: INTERVAL_MS, buckets };
  }

  /** The slot of `nowMs`'s second, reset first if it last held an earlier second. */
  private slot(nowMs: number): number {
    const sec = Math.floor(nowMs / INTERVAL_MS);
    const s = mod(sec, this.seconds);
    if (this.second[s] !== sec) {
      this.second[s] = sec;
      this.fired[s] = 0;
      this.executed[s] = 0;
      this.failed[s] = 0;
      this.seen[s] = 0;
      this.max[s] = 0;
      this.medianValid[s] = 0;
    }
    return s;
  }

  /** Nearest-rank median of the slot's reservoir. */
  private medianOf(s: number): number {
    if (this.medianValid[s] === 1) return this.median[s]!;
    const n = Math.min(this.seen[s]!, this.samples);
    const kept = this.reservoir.slice(s * this.samples, s * this.samples + n).sort();
    const m = kept[Math.ceil(n / 2) - 1]!;
    this.median[s] = m;
    this.medianValid[s] = 1;
    return m;
  }
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}
