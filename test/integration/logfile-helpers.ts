// Shared pieces of the logfile integration tests (persistence, crash, compaction, dump): a
// daemon on a logfile in a given directory, the observable state as sorted protocol lines,
// and cleanup of runner processes a SIGKILLed daemon leaves behind.
// Invariant: everything here talks to the real bin/tickd through its public surfaces (TCP,
// log lines, files); nothing reaches into the daemon's memory.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, type ConfigTree } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';

/** Starts (or restarts, same `dir` = same `<dir>/logfile`) a daemon on logfile persistence. */
export function logfileDaemon(dir: string, database: Record<string, unknown> = {}, more: ConfigTree = {}, workers = 1): Promise<Daemon> {
  return Daemon.start({ dir, workers, config: { ...more, database: { persistence: 'logfile', ...database } } });
}

/** Response lines of a list command without the request id and the terminal OK, sorted. */
export async function listLines(c: LineClient, command: string): Promise<string[]> {
  const lines = await c.request('ls', command, 20000);
  const last = lines.pop();
  if (last !== 'ls OK') throw new Error(`${command} failed: ${last}`);
  return lines.map((l) => l.slice('ls '.length)).sort();
}

export interface Snapshot {
  readonly jobs: string[];
  readonly rules: string[];
}

/** What a client can see of the whole state: every job and every rule. */
export async function snapshot(addr: Daemon['tcp']): Promise<Snapshot> {
  const c = await LineClient.connect(addr);
  try {
    return { jobs: await listLines(c, 'QUERY'), rules: await listLines(c, 'LISTRULES') };
  } finally {
    c.close();
  }
}

/** Sends one command and insists on a single `<rid> OK` (or `OK <body>`) line. */
export async function ok(c: LineClient, command: string): Promise<string> {
  const lines = await c.request('w', command);
  const last = lines[lines.length - 1]!;
  if (last !== 'w OK' && !last.startsWith('w OK ')) throw new Error(`${command} -> ${lines.join(' | ')}`);
  return last;
}

/** `<status> <execution>` of a job, or the error line. */
export async function getJob(c: LineClient, id: string): Promise<string> {
  const line = (await c.request('g', `GET ${id}`))[0]!;
  return line.startsWith('g OK ') ? line.slice('g OK '.length) : line;
}

/**
 * Kills the `sleep 30` runner processes whose pids a test's shell rule recorded in `file`
 * (a SIGKILLed daemon leaves them behind). A pid whose process is no longer that sleep (it
 * ended, and the number may have been reused) is left alone.
 */
export function killRecordedPids(file: string): void {
  if (!existsSync(file)) return;
  for (const word of readFileSync(file, 'utf8').split(/\s+/)) {
    const pid = Number(word);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    let cmdline: string;
    try { cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { continue; }
    if (cmdline !== 'sleep\u000030\u0000') continue;
    try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
  }
}

export function logfileOf(dir: string): string {
  return join(dir, 'logfile');
}

/** The log records of a daemon whose `msg` is `msg` (its stderr is JSON lines). */
export function logRecords(daemon: Daemon, msg: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of daemon.stderr) {
    try {
      const rec = JSON.parse(line) as Record<string, unknown>;
      if (rec['msg'] === msg) out.push(rec);
    } catch { /* not a log record */ }
  }
  return out;
}

/** 2100-01-01T00:00:00Z: jobs at or after it never fire during a test. */
export const FAR_FUTURE_NS = 4102444800000000000n;

/** The non-empty lines of a file that shell rules append to (none while it does not exist). */
export function linesOf(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : [];
}

/** How many times each job identifier was appended to `file`: its executions. */
export function runsPerJob(file: string): Map<string, number> {
  const runs = new Map<string, number>();
  for (const id of linesOf(file)) runs.set(id, (runs.get(id) ?? 0) + 1);
  return runs;
}
