// A control for the rows that report the primary's longest turn (retries, schedules-spread): a
// Node process that does nothing but wait, beside the daemon, with the same event-loop delay
// probe (perf_hooks, 1 ms resolution, a line a second). Its delay is the machine's alone: the
// time a process that wanted to run waited for a CPU (the daemon's other processes, the load
// generator, other tenants of the host). The primary's turns cannot be shorter than that; what
// the primary shows beyond it is tickd's. Measured here (2026-11-28): on the idle machine it
// waited up to 4.3 ms in 10 s; beside the retries row, 12-14 ms; two processes doing nothing
// but spin, one a core, saw pauses of 4-11 ms (the host's, not this machine's processes').
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const SCRIPT = `
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { appendFileSync } = require('node:fs');
const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
setInterval(() => { appendFileSync(process.argv[1], Date.now() + ' ' + (h.max / 1e6).toFixed(2) + '\\n'); h.reset(); }, 1000);
`;

export class ControlLoop {
  readonly #file: string;
  readonly #proc: ChildProcess;

  private constructor(file: string, proc: ChildProcess) {
    this.#file = file;
    this.#proc = proc;
  }

  static start(): ControlLoop {
    const file = join(process.env['TMPDIR'] ?? '/tmp', `tickd-bench-control-${process.pid}-${Date.now()}.txt`);
    return new ControlLoop(file, spawn(process.execPath, ['-e', SCRIPT, file], { stdio: 'ignore' }));
  }

  /** The longest delay among the seconds whose line was written in (fromMs, untilMs]; 0 when none was. */
  longestMs(fromMs: number, untilMs: number): number {
    let text = '';
    try {
      text = readFileSync(this.#file, 'utf8');
    } catch {
      return 0;
    }
    const seconds: { atMs: number; maxMs: number }[] = text.trim().split('\n').filter((l) => l !== '').map((l) => l.split(' ')).map((l) => ({ atMs: Number(l[0]), maxMs: Number(l[1]) }));
    return Math.max(0, ...seconds.filter((s) => s.atMs > fromMs && s.atMs <= untilMs).map((s) => s.maxMs));
  }

  stop(): void {
    this.#proc.kill('SIGKILL');
    rmSync(this.#file, { force: true });
  }
}
