// Looking ahead for the next due job (tickd(8) "Runner processes"): when it is due within
// LOOKAHEAD_NS and its rule's runner is http, the runner child is told to have a connection
// to that origin ready (lib/runner/http-preconnect.ts). A job that comes due after a quiet
// spell then starts on a connected socket: no TCP or TLS handshake between its due time and
// its request. The announcement carries the job's due time, for the primary's tick loop and the
// child to be awake at it (lib/engine/tick.ts awakeFor, cluster/runner-standby.ts), unless
// a due time within AWAKE_SPACING_NS of it was passed already (then null): several rules'
// runners may be announced in a second, their wake-ups may not. A scheduler knows when the
// next job is due; this puts that to use.
//
// Cost: one time comparison per tick; every CHECK_EVERY_NS a look at the earliest armed job
// and its rule. The same runner is announced at most once per LOOKAHEAD_NS (the child keeps a
// spare connection a few seconds, and makes none while it holds an idle one to the origin).
import type { RunnerSpec } from '../domain/runner-spec.ts';
import type { ReadonlyJobs, ReadonlyRules } from './changes.ts';

/** How far ahead of its due time a job's connection is opened. */
export const LOOKAHEAD_NS = 1_000_000_000n;
/** How often the earliest armed job is looked at. */
export const CHECK_EVERY_NS = 100_000_000n;

/** Due times closer than this to the last one passed are not passed (at most one wake-up a second). */
export const AWAKE_SPACING_NS = 1_000_000_000n;

/** `awakeNs`: when the job it was announced for is due (wall clock, epoch ns), or null (see above). */
export type Prepare = (runner: RunnerSpec, awakeNs: bigint | null) => void;

export class Lookahead {
  private readonly jobs: ReadonlyJobs;
  private readonly rules: ReadonlyRules;
  private readonly prepare: Prepare;
  private nextCheckNs = 0n;
  private lastRunner: RunnerSpec | null = null;
  private lastAtNs = 0n;
  private lastAwakeNs: bigint | null = null;

  constructor(jobs: ReadonlyJobs, rules: ReadonlyRules, prepare: Prepare) {
    this.jobs = jobs;
    this.rules = rules;
    this.prepare = prepare;
  }

  /** Called every tick with the tick's wall time. */
  check(nowNs: bigint): void {
    // A wall clock set back by more than one period looks again at once.
    if (nowNs < this.nextCheckNs && this.nextCheckNs - nowNs <= CHECK_EVERY_NS) return;
    this.nextCheckNs = nowNs + CHECK_EVERY_NS;
    const next = this.jobs.nextDue();
    if (next === undefined || next - nowNs > LOOKAHEAD_NS) return;
    const job = this.jobs.nextDueJob();
    if (job === undefined) return;
    const runner = this.rules.match(job.id)?.runner;
    if (runner?.type !== 'http') return;
    // The rule store keeps one runner object per rule until the rule is set again. A wall
    // clock set back since the last announcement makes it count as old.
    if (runner === this.lastRunner && nowNs >= this.lastAtNs && nowNs - this.lastAtNs < LOOKAHEAD_NS) return;
    this.lastRunner = runner;
    this.lastAtNs = nowNs;
    const last = this.lastAwakeNs;
    const awake = last === null || (next > last ? next - last : last - next) >= AWAKE_SPACING_NS;
    if (awake) this.lastAwakeNs = next;
    this.prepare(runner, awake ? next : null);
  }
}
