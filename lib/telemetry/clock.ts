// Converts monotonic process.hrtime.bigint() readings into epoch nanoseconds for span
// timestamps. An anchor pairs one wall-clock reading with one hrtime reading; a reading is
// its hrtime offset from the anchor added to the anchor's wall time. The anchor is renewed
// once it is a minute old so spans follow wall-clock steps (NTP) instead of drifting from
// them; between renewals, durations stay exact because both ends use the same anchor.
// Invariant: integer arithmetic only (bigint ns), never through a float.

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;
const ANCHOR_MAX_AGE_NS = 60n * NS_PER_S;

export interface ClockSources {
  /** Wall-clock milliseconds since the epoch (an integer, as Date.now gives). */
  readonly wallMs: () => number;
  /** Monotonic nanoseconds (process.hrtime.bigint). */
  readonly hrNs: () => bigint;
}

const SYSTEM: ClockSources = { wallMs: () => Date.now(), hrNs: () => process.hrtime.bigint() };

export class EpochClock {
  private readonly sources: ClockSources;
  private anchorHr = 0n;
  private anchorEpochNs = 0n;

  constructor(sources: ClockSources = SYSTEM) {
    this.sources = sources;
    this.reanchor();
  }

  /** The monotonic reading of now, to pair with toEpochNs. */
  nowHr(): bigint {
    return this.sources.hrNs();
  }

  /** Epoch nanoseconds of a process.hrtime.bigint() reading taken in this process. */
  toEpochNs(hr: bigint): bigint {
    if (this.sources.hrNs() - this.anchorHr >= ANCHOR_MAX_AGE_NS) this.reanchor();
    return this.anchorEpochNs + (hr - this.anchorHr);
  }

  private reanchor(): void {
    this.anchorHr = this.sources.hrNs();
    this.anchorEpochNs = BigInt(Math.trunc(this.sources.wallMs())) * NS_PER_MS;
  }
}

/** OpenTelemetry's HrTime: [seconds, nanoseconds] since the epoch. */
export function toHrTime(epochNs: bigint): [number, number] {
  const clamped = epochNs < 0n ? 0n : epochNs;
  return [Number(clamped / NS_PER_S), Number(clamped % NS_PER_S)];
}
