// Process facts from Linux's /proc, for tests about the processes the daemon starts.
import { readFileSync } from 'node:fs';

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

/** Live children of `pid` with an argument containing `needle`. */
export function childrenRunning(pid: number, needle: string): number[] {
  return childPids(pid).filter((child) => {
    try {
      return alive(child) && cmdline(child).some((arg) => arg.includes(needle));
    } catch {
      return false; // gone meanwhile
    }
  });
}
