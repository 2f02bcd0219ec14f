// The daemon's processes and what each holds resident, read from Linux's /proc: the primary
// (the pid that was spawned) and every process below it, each named by its role from its
// command line. RSS counts the pages of the Node binary that all of them share once per
// process (about 51 MB each here); PSS divides shared pages among the processes that map
// them, so the PSS total is what the daemon costs the machine.
import { readFileSync } from 'node:fs';
import { childPids, cmdline } from '../../test/helpers/procfs.ts';

export interface ProcessFootprint {
  readonly pid: number;
  readonly role: string;
  /** Resident set, bytes. */
  readonly rss: number;
  /** Proportional set, bytes. */
  readonly pss: number;
}

function role(pid: number, root: number): string {
  if (pid === root) return 'primary';
  const args = cmdline(pid).join(' ');
  for (const r of ['worker', 'runner-child', 'fold-child'] as const) if (args.includes(`cluster/${r}.`)) return r;
  return args.slice(0, 40);
}

function kib(text: string, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return m === null ? 0 : Number(m[1]) * 1024;
}

/** `root` and its descendants, with their footprints (processes gone meanwhile are left out). */
export function footprint(root: number): ProcessFootprint[] {
  const out: ProcessFootprint[] = [];
  const visit = (pid: number): void => {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      out.push({ pid, role: role(pid, root), rss: kib(rollup, 'Rss'), pss: kib(rollup, 'Pss') });
      for (const child of childPids(pid)) visit(child);
    } catch {
      // gone meanwhile
    }
  };
  visit(root);
  return out;
}

/** "primary 84, worker 73, ..." in MB (10^6 bytes). */
export function perProcess(fp: readonly ProcessFootprint[], key: 'rss' | 'pss'): string {
  return fp.map((p) => `${p.role} ${(p[key] / 1e6).toFixed(0)}`).join(', ');
}

export const total = (fp: readonly ProcessFootprint[], key: 'rss' | 'pss'): number => fp.reduce((n, p) => n + p[key], 0);
