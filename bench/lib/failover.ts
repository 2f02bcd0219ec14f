// The measures of the cluster-failover row: a closed-loop writer that keeps every id answered
// OK, the check of those ids against a QUERY, which due jobs a node fired (its `job fired`
// debug lines) and when their first firing by a new leader reached the sink, the NATS side
// (the server leading a stream, waiting until a restarted server's replicas are current), and
// the row's lateness probes and closed-loop rate.
// Reading a daemon's log while a failover is measured scans only the lines added since a
// cursor, with plain string tests: parsing every line would stall the bench process, and with
// it the sink whose arrival times are the figures.
import { connect, type Socket } from 'node:net';
import type { JetStreamManager } from '@nats-io/jetstream';
import { LineClient } from '../../test/helpers/client.ts';
import type { Address, Daemon } from '../../test/helpers/daemon.ts';
import { closedLoopSets } from './closed-loop.ts';
import { sleep, wallMs } from './harness.ts';
import { firingsOf, latenessOf, probeRule, scheduleProbes } from './probes.ts';
import type { Arrival, HttpSink } from './sink.ts';
import { spread, type Spread } from './stats.ts';

export interface AckedWriter {
  /** Every id answered OK, with the execution it was SET to. */
  readonly acked: Map<string, bigint>;
  /** Replies other than OK: when they came (wall ms), their text without the request id, and the write. */
  readonly errors: ReadonlyArray<{ readonly at: number; readonly text: string; readonly id: string; readonly exec: bigint }>;
  /**
   * Per address (in the order given), per connection to it: when (wall ms) the first SET
   * written after `afterMs` was answered OK, or null while none was.
   */
  firstOkSentAfter(afterMs: number): Array<Array<number | null>>;
  /**
   * Stops sending and waits up to `graceMs` for the replies still due, then closes the
   * connections; resolves with the writes left unanswered (neither acked nor refused).
   */
  stop(graceMs: number): Promise<Map<string, bigint>>;
}

/**
 * `perAddr` connections to each address, each in a closed loop: `SET <prefix>.<c>.<n> <exec(n)>`,
 * wait for the reply, next. The same ids every run, so a run's writes overwrite the previous
 * run's and the state stays the size of one run; `exec` must differ between runs.
 */
export async function ackedWriter(addrs: readonly Address[], perAddr: number, prefix: string, exec: (n: number) => bigint): Promise<AckedWriter> {
  const acked = new Map<string, bigint>();
  const errors: Array<{ at: number; text: string; id: string; exec: bigint }> = [];
  let running = true;
  const sockets: Socket[] = [];
  const inFlight: Array<{ id: string; at: bigint; sentMs: number } | null> = [];
  /** Per connection, the OK replies: when their SET was written, and when the OK came (wall ms). */
  const oks: Array<Array<{ sentMs: number; atMs: number }>> = [];
  const finished: Array<Promise<void>> = [];
  const targets = addrs.flatMap((a) => Array.from({ length: perAddr }, () => a));
  await Promise.all(targets.map((addr, c) => new Promise<void>((connected, failed) => {
    const socket = connect(addr.port, addr.host);
    sockets.push(socket);
    let n = 0;
    let buffered = '';
    oks[c] = [];
    const send = (): void => {
      const w = { id: `${prefix}.${c}.${n}`, at: exec(n), sentMs: wallMs() };
      inFlight[c] = w;
      socket.write(`${n} SET ${w.id} ${w.at}\n`);
    };
    const done = Promise.withResolvers<void>();
    finished.push(done.promise);
    socket.setEncoding('utf8');
    socket.once('error', (err) => { failed(err); done.resolve(); });
    socket.on('close', () => done.resolve());
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let i;
      while ((i = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        const w = inFlight[c];
        if (line === `${n} OK` && w != null) {
          acked.set(w.id, w.at);
          oks[c]!.push({ sentMs: w.sentMs, atMs: wallMs() });
        } else errors.push({ at: wallMs(), text: line.slice(line.indexOf(' ') + 1), id: w?.id ?? '', exec: w?.at ?? -1n });
        inFlight[c] = null;
        n++;
        if (running) send();
        else socket.destroy();
      }
    });
    socket.once('connect', () => { send(); connected(); });
  })));
  return {
    acked,
    errors,
    firstOkSentAfter(afterMs) {
      // A connection's SETs are written one after another: a binary search for the first one after.
      const first = (list: ReadonlyArray<{ sentMs: number; atMs: number }>): number | null => {
        let lo = 0;
        let hi = list.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (list[mid]!.sentMs > afterMs) hi = mid;
          else lo = mid + 1;
        }
        return list[lo]?.atMs ?? null;
      };
      return addrs.map((_, a) => Array.from({ length: perAddr }, (_, k) => first(oks[a * perAddr + k]!)));
    },
    async stop(graceMs) {
      running = false;
      const timer = setTimeout(() => { for (const s of sockets) s.destroy(); }, graceMs);
      await Promise.all(finished);
      clearTimeout(timer);
      return new Map(inFlight.flatMap((w) => (w == null ? [] : [[w.id, w.at] as const])));
    },
  };
}

/** The jobs under `pattern` by a QUERY through `addr`: id -> execution (as text). */
export function queryJobs(addr: Address, pattern: string): Promise<Map<string, string>> {
  return query(addr, pattern, 3);
}

/** The jobs under `pattern` by a QUERY through `addr`: id -> status. */
export function queryJobStates(addr: Address, pattern: string): Promise<Map<string, string>> {
  return query(addr, pattern, 2);
}

async function query(addr: Address, pattern: string, field: number): Promise<Map<string, string>> {
  const client = await LineClient.connect(addr);
  try {
    const lines = await client.request('q', `QUERY ${pattern}`, 60_000);
    if (lines.at(-1) !== 'q OK') throw new Error(`QUERY ${pattern} answered ${lines.at(-1)}`);
    const present = new Map<string, string>();
    for (const l of lines.slice(0, -1)) {
      const words = l.split(' ');
      present.set(words[1]!, words[field]!);
    }
    return present;
  } finally {
    client.close();
  }
}

/** How many of `writes` (id -> execution) `jobs` does not show at that execution. */
export function missingFrom(jobs: ReadonlyMap<string, string>, writes: ReadonlyMap<string, bigint>): number {
  let n = 0;
  for (const [id, at] of writes) if (jobs.get(id) !== String(at)) n++;
  return n;
}

/** One SET on a new connection: ms until its reply, and the reply (without the request id). */
export async function timedSet(addr: Address, id: string, at: bigint): Promise<{ ms: number; reply: string }> {
  const t0 = wallMs();
  const client = await LineClient.connect(addr);
  try {
    const reply = (await client.request('t', `SET ${id} ${at}`, 60_000)).at(-1)!;
    return { ms: wallMs() - t0, reply: reply.slice(2) };
  } catch (err) {
    return { ms: wallMs() - t0, reply: (err as Error).message };
  } finally {
    client.close();
  }
}

/** The lines a daemon logs from now on, read by string tests (no JSON parsing). */
export class LogCursor {
  readonly daemon: Daemon;
  private readonly start: number;
  private next: number;
  constructor(daemon: Daemon) {
    this.daemon = daemon;
    this.start = daemon.stderr.length;
    this.next = this.start;
  }

  /** Lines logged since the cursor was made. */
  since(): string[] {
    return this.daemon.stderr.slice(this.start);
  }

  /** True once a line containing every one of `parts` was logged since the last call. */
  saw(...parts: string[]): boolean {
    const lines = this.daemon.stderr;
    let found = false;
    for (; this.next < lines.length; this.next++) if (parts.every((p) => lines[this.next]!.includes(p))) found = true;
    return found;
  }
}

/** Polls every 10 ms until one of the cursors saw a line with all `parts`; that daemon, or null at the deadline. */
export async function firstToLog(cursors: readonly LogCursor[], timeoutMs: number, ...parts: string[]): Promise<Daemon | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = cursors.find((c) => c.saw(...parts));
    if (hit !== undefined) return hit.daemon;
    if (Date.now() > deadline) return null;
    await sleep(10);
  }
}

/**
 * When the first job under `pattern` fired by one of `firers` (by their `job fired` lines)
 * reached the sink. A job fired before by a node not in `firers` (the old leader) has that
 * earlier arrival too, so of each job's arrivals the first one that is theirs is the one after
 * as many as were not theirs. null when none of theirs arrived.
 */
export function firstArrivalBy(arrivals: readonly Arrival[], pattern: string, firers: readonly Daemon[]): number | null {
  const fires = new Map<string, number>();
  for (const d of firers) for (const f of firingsOf(d, pattern)) fires.set(f.jobId, (fires.get(f.jobId) ?? 0) + 1);
  const at = new Map<string, number[]>();
  for (const a of arrivals) {
    if (!fires.has(a.jobId)) continue;
    const list = at.get(a.jobId);
    if (list === undefined) at.set(a.jobId, [a.arrivalMs]);
    else list.push(a.arrivalMs);
  }
  let first = Number.POSITIVE_INFINITY;
  for (const [id, list] of at) {
    list.sort((a, b) => a - b);
    first = Math.min(first, list[Math.max(0, list.length - fires.get(id)!)]!);
  }
  return Number.isFinite(first) ? first : null;
}

/** Warnings and errors (level >= 40) among `lines`, as message -> count; lines that are not JSON count as themselves. */
export function warnings(lines: readonly string[], into = new Map<string, number>()): Map<string, number> {
  for (const line of lines) {
    let key: string | null = null;
    if (!line.startsWith('{')) key = line.slice(0, 120);
    else if (/"level":(4|5|6)0\b/.test(line)) {
      const rec = JSON.parse(line) as { msg?: string; err?: unknown; cause?: string };
      const detail = rec.cause ?? (typeof rec.err === 'string' ? rec.err : undefined);
      key = `${rec.msg ?? '?'}${detail === undefined ? '' : ` (${detail.slice(0, 80)})`}`;
    }
    if (key !== null) into.set(key, (into.get(key) ?? 0) + 1);
  }
  return into;
}

/** The time (wall ms, from its `time`) of the first of `lines` that contains `part`, or null. */
export function loggedAt(lines: readonly string[], part: string): number | null {
  const line = lines.find((l) => l.includes(part));
  if (line === undefined) return null;
  const t = Date.parse((JSON.parse(line) as { time?: string }).time ?? '');
  return Number.isNaN(t) ? null : t;
}

/** The message of the last info-or-above line among `lines` that is not a firing's, with its time; '-' if none. */
export function lastInfo(lines: readonly string[]): string {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.startsWith('{') || !/"level":[3-6]0\b/.test(line)) continue;
    const rec = JSON.parse(line) as { msg?: string; time?: string };
    return `"${rec.msg}" at ${rec.time?.slice(11, 23)}`;
  }
  return '-';
}

export function describeCounts(counts: ReadonlyMap<string, number>): string {
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `"${k}" x${n}`).join(', ');
}

/** The NATS server name leading `stream`'s RAFT group, or null. */
export async function streamLeader(jsm: JetStreamManager, stream: string): Promise<string | null> {
  return (await jsm.streams.info(stream)).cluster?.leader ?? null;
}

/** Waits until each stream has a leader and `replicas` other peers, all current; ms waited. */
export async function waitReplicasCurrent(jsm: JetStreamManager, streams: readonly string[], replicas: number, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const ok = await Promise.all(streams.map(async (s) => {
      try {
        const c = (await jsm.streams.info(s)).cluster;
        return c?.leader !== undefined && c.replicas?.length === replicas && c.replicas.every((r) => r.current && !r.offline);
      } catch {
        return false;
      }
    }));
    if (ok.every(Boolean)) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`streams ${streams.join(', ')} not current ${timeoutMs} ms after a NATS server restarted`);
    await sleep(100);
  }
}

// The row's two measures beside the failovers.

export interface Lateness {
  readonly fired: Spread;
  readonly arrived: Spread;
  /** How long scheduling the probes took (they are due from `leadMs` after it began). */
  readonly scheduleMs: number;
}

/**
 * `warmUp` probes, then `count` probes `spacingMs` apart, due from `leadMs` on, scheduled
 * through `daemon` (which must log at debug level): its own `job fired` lines, and the sink's arrivals.
 */
export async function probeLateness(daemon: Daemon, sink: HttpSink, tag: string, warmUp: number, count: number, spacingMs: number, leadMs: number): Promise<Lateness> {
  let scheduleMs = 0;
  for (const [pattern, n] of [[`${tag}w.`, warmUp], [`${tag}p.`, count]] as const) {
    await probeRule(daemon, pattern, sink);
    const before = sink.received;
    const t0 = performance.now();
    await scheduleProbes(daemon, pattern, n, leadMs, spacingMs);
    scheduleMs = performance.now() - t0;
    await sink.waitFor(before + n, leadMs + n * spacingMs + 15_000);
  }
  const pattern = `${tag}p.`;
  return { fired: spread(firingsOf(daemon, pattern).map((f) => f.latenessMs)), arrived: spread(latenessOf(sink.arrivals, pattern)), scheduleMs };
}

/** SET/s of `connections` closed-loop connections for `seconds` after 1 s of warm-up (ids `tput.*`, the same every run). */
export async function closedLoopRate(addr: Address, connections: number, seconds: number): Promise<{ perSecond: number; errors: number }> {
  const load = await closedLoopSets(addr, connections, 'tput');
  let replies = 0;
  let elapsed = 0;
  try {
    await sleep(1000);
    const r0 = load.replies;
    const t0 = performance.now();
    await sleep(seconds * 1000);
    replies = load.replies - r0;
    elapsed = (performance.now() - t0) / 1000;
  } finally {
    await load.stop();
  }
  return { perSecond: replies / elapsed, errors: load.errors };
}
