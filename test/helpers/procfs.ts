// Process facts from Linux's /proc, for tests about the processes the daemon starts.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { release } from 'node:os';

/** Exists and is not a zombie (a killed orphan stays a zombie until init reaps it). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z'; // the command name may hold spaces and ')'
  } catch {
    return false;
  }
}

/** The argument vector of `pid`. */
export function cmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
}

/** Children started by the main thread of `pid`. */
export function childPids(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

/** Whether `pid` is alive with an argument containing `needle`. */
function runs(pid: number, needle: string): boolean {
  try {
    return alive(pid) && cmdline(pid).some((arg) => arg.includes(needle));
  } catch {
    return false; // gone meanwhile
  }
}

/** Live children of `pid` with an argument containing `needle`. */
export function childrenRunning(pid: number, needle: string): number[] {
  return childPids(pid).filter((child) => runs(child, needle));
}

/** Live descendants of `pid` (its children, theirs, ...) with an argument containing `needle`. */
export function descendantsRunning(pid: number, needle: string): number[] {
  let children: number[];
  try {
    children = childPids(pid);
  } catch {
    return []; // gone meanwhile
  }
  return children.flatMap((child) => [...(runs(child, needle) ? [child] : []), ...descendantsRunning(child, needle)]);
}

/** The EEVDF slice of the main thread of `pid` in ns (`se.slice`), or null where /proc does not show it. */
export function schedSlice(pid: number): number | null {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/task/${pid}/sched`, 'utf8');
  } catch {
    return null; // a kernel without CONFIG_SCHED_DEBUG has no such file
  }
  const m = /^se\.slice\s*:\s*(\d+)$/m.exec(text);
  return m === null ? null : Number(m[1]);
}

/** Whether this machine can give a thread a custom slice: Linux 6.12+, perl, and a slice /proc shows. */
export function customSlicesHere(): boolean {
  const [major = 0, minor = 0] = release().split('.').map((n) => parseInt(n, 10));
  const perl = spawnSync('perl', ['-e', '1']).status === 0;
  return (major > 6 || (major === 6 && minor >= 12)) && perl && ['x64', 'arm64'].includes(process.arch) && schedSlice(process.pid) !== null;
}

/** Resident set size of `pid` in bytes (VmRSS), 0 once it is gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s*(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0;
  }
}

/** Resident set size of `pid` and its direct children (the daemon: primary and workers). */
export function treeRss(pid: number): number {
  return rssBytes(pid) + childPids(pid).reduce((sum, child) => sum + rssBytes(child), 0);
}

/**
 * SIGSTOP, then waits until every thread of `pid` is stopped. kill() returns before the stop
 * takes effect: a thread busy on the other core runs on for a moment, and a NATS server was
 * seen to acknowledge a publish sent after kill() had returned.
 */
export async function pause(pid: number, timeoutMs = 5_000): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  const deadline = performance.now() + timeoutMs;
  while (!threadStates(pid).every((s) => s === 'T' || s === 't')) {
    if (performance.now() > deadline) throw new Error(`process ${pid} not stopped ${timeoutMs} ms after SIGSTOP: ${threadStates(pid).join('')}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

function threadStates(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return stat[stat.lastIndexOf(')') + 2]!;
    } catch {
      return 'T'; // a thread that ended meanwhile does not run
    }
  });
}
