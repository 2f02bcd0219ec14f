// Process facts from Linux's /proc, for tests about the processes the daemon starts.
import { readFileSync, readdirSync } from 'node:fs';

/** State letter and parent pid from /proc/<pid>/stat (the command name may hold spaces). */
function statOf(pid: number): { state: string; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state = '', ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return null;
  }
}

/** Running, sleeping or stopped: not gone and not a zombie. */
export function alive(pid: number): boolean {
  const stat = statOf(pid);
  return stat !== null && stat.state !== 'Z';
}

/** Live children of `ppid` whose command line contains `needle`. */
export function childrenOf(ppid: number, needle: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    if (statOf(pid)?.ppid !== ppid || !alive(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
    } catch {
      return false; // gone meanwhile
    }
  });
}
