// The primary's event-loop delay, as loop-delay.cjs (preloaded into the primary by a row)
// records it: a line a second `<epoch ms> <max ms> <p99 ms> <cpu ms> <gap ms> <gap cpu ms>`, and `<epoch ms> gc <ms> <kind>`
// for each garbage collection of 3 ms or more. A row gives the daemon env() and reads read().
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./loop-delay.cjs', import.meta.url));

/**
 * One second's longest delay: the longest turn that ended in it, within 1 ms; `cpuMs` the most
 * CPU time the main thread used between two firings of a 1 ms timer (its own work in a turn, at
 * most); `gapMs` the longest time between two firings, and `gapCpuMs` the CPU time it ran in it.
 */
export interface Second { readonly atMs: number; readonly maxMs: number; readonly cpuMs: number; readonly gapMs: number; readonly gapCpuMs: number }
export interface Collection { readonly atMs: number; readonly ms: number }

export class LoopDelays {
  readonly file = join(process.env['TMPDIR'] ?? '/tmp', `tickd-bench-loop-${process.pid}-${Date.now()}.txt`);

  /** The daemon's environment: the preload, and where it writes. */
  env(): Record<string, string> {
    return { NODE_OPTIONS: `--require ${PRELOAD}`, TICKD_BENCH_LOOP_DELAY: this.file };
  }

  /**
   * The seconds whose line was written in (fromMs, untilMs] (a line closes its second), and
   * the collections that began in [fromMs, untilMs].
   */
  read(fromMs: number, untilMs: number): { readonly seconds: Second[]; readonly gcs: Collection[] } {
    const lines = readFileSync(this.file, 'utf8').trim().split('\n').map((l) => l.split(' '));
    const seconds = lines.filter((l) => l[1] !== 'gc')
      .map((l) => ({ atMs: Number(l[0]), maxMs: Number(l[1]), cpuMs: Number(l[3]), gapMs: Number(l[4]), gapCpuMs: Number(l[5]) }))
      .filter((s) => s.atMs > fromMs && s.atMs <= untilMs);
    const gcs = lines.filter((l) => l[1] === 'gc').map((l) => ({ atMs: Number(l[0]), ms: Number(l[2]) }))
      .filter((g) => g.atMs >= fromMs && g.atMs <= untilMs);
    return { seconds, gcs };
  }

  remove(): void {
    rmSync(this.file, { force: true });
  }
}
