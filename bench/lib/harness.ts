// Daemon and temp-dir lifetime for the rows: every row gets its own directory, removed when the
// row ends (and, whatever happens, at exit); every daemon it starts is stopped gracefully, or
// killed if it does not stop in time. The daemon is the test harness's (test/helpers/daemon.ts):
// the real bin/tickd on port 0, ready when its "ready" log line says where it listens.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Daemon, type DaemonOptions } from '../../test/helpers/daemon.ts';

const dirs = new Set<string>();
process.on('exit', () => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

export interface BenchDir {
  readonly path: string;
  remove(): void;
}

export function benchDir(row: string): BenchDir {
  const path = mkdtempSync(join(tmpdir(), `tickd-bench-${row}-`));
  dirs.add(path);
  return { path, remove: () => { rmSync(path, { recursive: true, force: true }); dirs.delete(path); } };
}

// BENCH_DAEMON_ARGS: flags added to every daemon a row starts, to compare a setting on the
// same rows (e.g. BENCH_DAEMON_ARGS='--tick-slice 0').
const extraArgs = (process.env['BENCH_DAEMON_ARGS'] ?? '').split(' ').filter((a) => a !== '');
// BENCH_DAEMON_NODE_OPTIONS: Node options for every process of every daemon a row starts (after
// the row's own), to compare a V8 setting (e.g. '--max-semi-space-size=4') without the bench's
// own process taking it too.
const extraNodeOptions = process.env['BENCH_DAEMON_NODE_OPTIONS'] ?? '';

/** Starts bin/tickd in `dir`; 60 s for "ready" because a 1M-record replay comes first. */
export function startDaemon(dir: string, opts: Omit<DaemonOptions, 'dir'> = {}): Promise<Daemon> {
  const nodeOptions = [opts.env?.['NODE_OPTIONS'] ?? '', extraNodeOptions].filter((o) => o !== '').join(' ');
  const env = nodeOptions === '' ? opts.env : { ...opts.env, NODE_OPTIONS: nodeOptions };
  return Daemon.start({ readyTimeoutMs: 60_000, ...opts, ...(env === undefined ? {} : { env }), args: [...(opts.args ?? []), ...extraArgs], dir });
}

/** SIGTERM (the graceful path: drain, flush, fsync), SIGKILL if that takes over `graceMs`. */
export async function stopDaemon(daemon: Daemon, graceMs = 30_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), graceMs); });
  const outcome = await Promise.race([daemon.stop(), late]);
  clearTimeout(timer);
  if (outcome === 'late') await daemon.kill();
}

/** Runs `body` with a daemon in a fresh directory; stops it and removes the directory after. */
export async function withDaemon<T>(row: string, opts: Omit<DaemonOptions, 'dir'>, body: (daemon: Daemon, dir: string) => Promise<T>): Promise<T> {
  const dir = benchDir(row);
  try {
    const daemon = await startDaemon(dir.path, opts);
    try {
      return await body(daemon, dir.path);
    } finally {
      await stopDaemon(daemon);
    }
  } finally {
    dir.remove();
  }
}

/**
 * Why a daemon is gone, for a row's error: its exit status and the first line of a crash
 * (Node prints uncaught errors as plain text, not as a log record), or its last error record.
 * null while it runs.
 */
/** A GET (or any request) to the daemon's HTTP interface; it must have [http] listen. */
export function httpOf(daemon: Daemon, path: string, init?: RequestInit): Promise<Response> {
  if (daemon.http === null) throw new Error(`${path}: the daemon has no HTTP interface ([http] listen)`);
  return fetch(`http://${daemon.http.host}:${daemon.http.port}${path}`, init);
}

export function deathOf(daemon: Daemon): string | null {
  const { exitCode, signalCode } = daemon.proc;
  if (exitCode === null && signalCode === null) return null;
  const lines = daemon.stderr;
  const crash = lines.find((l) => /^\w*Error\b/.test(l)) ?? lines.filter((l) => l.includes('"level":50') || l.includes('"level":60')).at(-1);
  return `tickd exited (${exitCode ?? signalCode}) during the run${crash === undefined ? '' : `: ${crash.slice(0, 300)}`}`;
}

export interface Rss {
  /** VmRSS: resident now. */
  readonly bytes: number;
  /** VmHWM: the resident peak so far. */
  readonly peakBytes: number;
}

/** The resident set of a process from /proc/<pid>/status (Linux; values there are KiB). */
export function rssOf(pid: number): Rss {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
    if (m === null) throw new Error(`/proc/${pid}/status has no ${key}`);
    return Number(m[1]) * 1024;
  };
  return { bytes: kib('VmRSS'), peakBytes: kib('VmHWM') };
}

/** Megabytes as the tables print them: 10^6 bytes (the larger figure of MB and MiB). */
export const mb = (bytes: number): number => bytes / 1e6;

export function pidOf(daemon: Daemon): number {
  const pid = daemon.proc.pid;
  if (pid === undefined) throw new Error('the daemon has no pid');
  return pid;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Wall-clock milliseconds since the epoch with sub-millisecond resolution. */
export const wallMs = (): number => performance.timeOrigin + performance.now();

/** Wall-clock nanoseconds as an exact integer (sub-ms part from the monotonic clock). */
export function wallNs(): bigint {
  const ms = wallMs();
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
}
