// Wall-clock (epoch) nanoseconds from the monotonic clock, shared by the engine (due times)
// and telemetry (span timestamps; it runs in workers too, so this module imports nothing).
// Date.now() only has milliseconds, which alone would add up to 1 ms of lateness, so the
// monotonic process.hrtime.bigint() is anchored to the wall clock: first at sub-millisecond
// precision (performance.timeOrigin + performance.now()), then re-anchored to Date.now()
// whenever a reading drifts from it by more than two milliseconds (NTP steps, suspend).
// Between re-anchorings durations are exact: both ends go through the same anchor.
// Invariant: integer arithmetic only (bigint ns), never a timestamp through a float.

/** The longest delay setTimeout/setInterval honour; a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const NS_PER_MS = 1_000_000n;
const DRIFT_NS = 2n * NS_PER_MS;

export interface ClockSources {
  /** Wall-clock milliseconds since the epoch (an integer, as Date.now gives). */
  readonly wallMs: () => number;
  /** Monotonic nanoseconds (process.hrtime.bigint). */
  readonly hrNs: () => bigint;
  /** Sub-millisecond epoch nanoseconds for the first anchor; wallMs is used when absent. */
  readonly preciseWallNs?: () => bigint;
}

const SYSTEM: ClockSources = {
  wallMs: () => Date.now(),
  hrNs: () => process.hrtime.bigint(),
  preciseWallNs: () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n,
};

export class EpochClock {
  private readonly sources: ClockSources;
  private anchorHr: bigint;
  private anchorEpochNs: bigint;

  constructor(sources: ClockSources = SYSTEM) {
    this.sources = sources;
    this.anchorEpochNs = sources.preciseWallNs?.() ?? this.wallNs();
    this.anchorHr = sources.hrNs();
  }

  /** The monotonic reading of now, to pair with toEpochNs. */
  nowHr(): bigint {
    return this.sources.hrNs();
  }

  /** Epoch nanoseconds of now. */
  nowNs(): bigint {
    const hr = this.sources.hrNs();
    this.checkDrift(hr);
    return this.anchorEpochNs + (hr - this.anchorHr);
  }

  /** Epoch nanoseconds of a process.hrtime.bigint() reading taken in this process. */
  toEpochNs(hr: bigint): bigint {
    this.checkDrift(this.sources.hrNs());
    return this.anchorEpochNs + (hr - this.anchorHr);
  }

  /** Re-anchors at `nowHr` if the anchored reading of it strays from Date.now(). */
  private checkDrift(nowHr: bigint): void {
    const wall = this.wallNs();
    const drift = this.anchorEpochNs + (nowHr - this.anchorHr) - wall;
    // Date.now() truncates: a correct clock reads 0..1 ms ahead of it.
    if (drift > DRIFT_NS + NS_PER_MS || drift < -DRIFT_NS) {
      this.anchorEpochNs = wall;
      this.anchorHr = nowHr;
    }
  }

  private wallNs(): bigint {
    return BigInt(Math.trunc(this.sources.wallMs())) * NS_PER_MS;
  }
}

// The process's wall clock for due times: jobs name an instant since the epoch, and the tick,
// the runner pool and the runner child place and measure them on this one reading.
const wallClock = new EpochClock();

export function wallNowNs(): bigint {
  return wallClock.nowNs();
}

/** The wall-clock nanoseconds of a process.hrtime.bigint() reading, in the same reading as wallNowNs. */
export function wallOfHr(hr: bigint): bigint {
  return wallClock.toEpochNs(hr);
}
