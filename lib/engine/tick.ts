// The fixed-rate tick loop (tickd.toml(5) [database]: `framerate` Hz). Each tick runs the
// engine's tick, which fires what is due (lib/engine/firing.ts). Pacing uses the monotonic
// clock and does not drift: each tick is due at an instant of a fixed grid (below), so time
// spent inside a tick shortens the next wait instead of stretching the period. If the loop
// falls more than a few periods behind (a blocked event loop) it skips ahead rather than
// firing a burst of ticks. Ticks behind time (each took its period or more) run back to back
// for TURN_BUDGET_NS at most; the next then runs on the next event-loop turn (setImmediate), so
// that they never hold the event loop for long together.
// setTimeout has millisecond granularity; we schedule for the remaining whole milliseconds
// and let the next tick catch up, which keeps the average rate exact.
//
// The grid is fixed in wall-clock time, whenever the daemon started: every instant whose
// epoch nanoseconds are a multiple of the period (at the default 512 Hz, 1 953 125 ns: a tick
// at each whole second, as at every rate that divides 10^9 ns). A job due at a whole second,
// or at any instant of the grid, is then fired by the tick at that instant, not up to a period
// later; so is a burst of them. The grid is found again after each tick through `epochOf`
// (the scheduler's clock): when that clock is re-anchored (an NTP step) the next tick moves to
// the grid in the new reading.
// The first tick runs at start, off the grid, for what is already due.
//
// A tick that returns true had more due than it fired (a burst, fired in slices): the next
// slice runs on the following event-loop turn (setImmediate), after the I/O that is ready, so
// the first executions leave and commands are served between slices; the paced ticks go on.
//
// awakeFor(T): the lookahead (lib/engine/lookahead.ts) announced a job due at T. From
// AWAKE_LEAD_NS before the tick that covers T until that tick, the loop turns (setImmediate)
// instead of sleeping in a timer: that tick runs at its grid instant, not up to a millisecond
// after it (setTimeout's granularity), in a process that did not just wake from idle. The
// runner child does the same (cluster/runner-standby.ts). The lookahead passes at most one
// instant a second: at most AWAKE_LEAD_NS of one core a second.
//
// Each turn that ran ticks is timed, wall time, and handed to `onTurn` (the primary records it
// as tickd.tick.turn_ms): what TURN_BUDGET_NS bounds in ticks, and what a collection or a wait
// for a CPU adds to it, seen from inside.
/** How long before the tick that covers an announced instant the loop stops sleeping. */
export const AWAKE_LEAD_NS = 2_000_000n;
/**
 * How long ticks behind time may run back to back in one event-loop turn. 4 ms, with a tick's
 * own 2 ms of deciding schedules on top, made turns of 5-10 ms of the main thread's CPU while
 * 100 000 schedules were decided ahead (schedules-spread, a CPU profile matched to the turns);
 * on a busy machine a turn that long is also cut into pieces by other processes' slices.
 */
export const TURN_BUDGET_NS = 2_000_000n;

/** The wall-clock (epoch) nanoseconds of a process.hrtime.bigint() reading. */
export type EpochOf = (hr: bigint) => bigint;

export class Ticker {
  private readonly periodNs: bigint;
  private readonly onTick: () => boolean | void;
  private readonly epochOf: EpochOf;
  private readonly onTurn: ((ns: bigint) => void) | undefined;
  private nextAt = 0n;
  private timer: NodeJS.Timeout | null = null;
  private burst: NodeJS.Immediate | null = null;
  private turn: NodeJS.Immediate | null = null;
  private awakeAt: bigint | null = null;
  private running = false;

  /** `onTurn`: the wall time of each event-loop turn that ran ticks (tickd.tick.turn_ms). */
  constructor(hz: number, onTick: () => boolean | void, epochOf: EpochOf = (hr) => hr, onTurn?: (ns: bigint) => void) {
    this.periodNs = BigInt(Math.round(1e9 / hz));
    this.onTick = onTick;
    this.epochOf = epochOf;
    this.onTurn = onTurn;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.nextAt = process.hrtime.bigint();
    this.loop();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.burst !== null) clearImmediate(this.burst);
    this.burst = null;
    if (this.turn !== null) clearImmediate(this.turn);
    this.turn = null;
  }

  /** Stay awake for the tick that covers `epochNs` (an announced due time); replaces the last. */
  awakeFor(epochNs: bigint): void {
    this.awakeAt = epochNs;
  }

  private runTick(): void {
    if (this.onTick() === true && this.burst === null) this.burst = setImmediate(this.continueBurst);
  }

  private readonly continueBurst = (): void => {
    this.burst = null;
    if (!this.running) return;
    const started = process.hrtime.bigint();
    this.runTick();
    this.onTurn?.(process.hrtime.bigint() - started);
  };

  private readonly loop = (): void => {
    this.timer = null;
    this.turn = null;
    if (!this.running) return;
    let now = process.hrtime.bigint();
    const turnStarted = now;
    let ticked = false;
    while (now >= this.nextAt) {
      ticked = true;
      if (this.awakeAt !== null && this.epochOf(now) >= this.awakeAt) this.awakeAt = null; // this tick covers it
      this.runTick();
      this.nextAt = this.gridAfter(this.nextAt);
      now = process.hrtime.bigint();
      if (now - this.nextAt > 4n * this.periodNs) this.nextAt = now; // fell behind: skip, don't burst
      if (now >= this.nextAt && now - turnStarted >= TURN_BUDGET_NS) {
        // Ticks behind time run back to back for TURN_BUDGET_NS at most, then on the next turn,
        // after the I/O that is ready. Unbounded, ticks that each took their period held the
        // event loop for as long as they did: 150-330 ms while 100 000 schedules were decided
        // ahead, 2 ms of deciding a tick (bench row schedules-spread). Not one tick a turn:
        // a tick late by a collection then waits for the I/O of a turn too (bench row
        // lateness: max 10-13 ms against 6-11).
        this.turn = setImmediate(this.loop);
        this.onTurn?.(now - turnStarted);
        return;
      }
    }
    if (ticked) this.onTurn?.(now - turnStarted);
    let wakeAt = this.nextAt;
    // Awake only before the tick that covers the instant: the turns last AWAKE_LEAD_NS at most.
    if (this.awakeAt !== null && this.epochOf(this.nextAt) >= this.awakeAt) {
      if (this.nextAt - now <= AWAKE_LEAD_NS) {
        this.turn = setImmediate(this.loop);
        return;
      }
      wakeAt = this.nextAt - AWAKE_LEAD_NS;
    }
    const waitMs = Number((wakeAt - now) / 1_000_000n);
    this.timer = setTimeout(this.loop, waitMs);
  };

  /** The first instant of the grid strictly after `hr`, as a monotonic reading. */
  private gridAfter(hr: bigint): bigint {
    const p = this.periodNs;
    const phase = ((this.epochOf(hr) % p) + p) % p;
    return hr + p - phase;
  }
}
