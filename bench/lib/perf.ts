// Counts a process's fsync calls in the kernel while a benchmark runs, with `perf stat` on the
// syscall tracepoints: in-kernel counters, so the daemon is not slowed the way strace would
// slow it. Optional: without perf (or without the permission to use tracepoints) the count
// is null and the figure that needs it is left out.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

const PERF = '/usr/bin/perf';
const EVENTS = ['syscalls:sys_enter_fsync', 'syscalls:sys_enter_fdatasync'];

export interface SyscallCounter {
  /** Total fsync + fdatasync calls since attaching, or null if perf could not count. */
  stop(): Promise<number | null>;
}

/** Attaches to every thread of `pid` (the writes and fsyncs run on libuv's pool threads). */
export function countFsyncs(pid: number): SyscallCounter {
  if (!existsSync(PERF)) return { stop: () => Promise.resolve(null) };
  let proc: ChildProcess;
  try {
    proc = spawn(PERF, ['stat', '-x', ',', '-e', EVENTS.join(','), '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch {
    return { stop: () => Promise.resolve(null) };
  }
  let stderr = '';
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (c: string) => { stderr += c; });
  const exited = new Promise<void>((resolve) => { proc.on('error', () => resolve()); proc.on('exit', () => resolve()); });
  // perf says nothing once attached: it counts from a few ms after this returns, so a caller
  // counting its own events from now on overstates them by that much (about 1% over 5 s).
  return {
    async stop() {
      proc.kill('SIGINT'); // counting stops here
      const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
      let total = 0;
      let seen = 0;
      for (const line of stderr.split('\n')) {
        const [count, , event] = line.split(',');
        if (event === undefined || !EVENTS.includes(event)) continue;
        if (!/^\d+$/.test(count ?? '')) return null; // "<not supported>" / "<not counted>"
        total += Number(count);
        seen++;
      }
      return seen === EVENTS.length ? total : null;
    },
  };
}
