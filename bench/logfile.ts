// Logfile benchmark (run: node --expose-gc bench/logfile.ts [dir]; --expose-gc lets step 3
// start from a collected heap). In a temp directory (or `dir`, to
// measure another filesystem) it prints:
//  1. durable throughput: 64 clients, each appending and awaiting flush() in a loop, with
//     fsync_on_persist on (one record per flush, then 32 per flush): records/s, write rounds
//     (= fsyncs) and the mean records per round, showing how group commit shares fsyncs;
//  2. replay of a 1 000 000-job-record file (250 000 jobs x 4 states): time and RSS growth,
//     with the records kept in a Map as a store would;
//  3. compaction of that file by the Compactor (fold child process), alone and then while 64
//     clients keep writing: wall time, the worst event-loop stall (perf_hooks histogram and a
//     1 ms interval probe), and the worst flush latency of the clients during the cycle. Under
//     load the same measure is first taken without compaction: on a 2-core machine the load's
//     own GC and fsync threads already cause stalls, and only the difference is compaction's.
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Job } from '../lib/domain/job.ts';
import { silentLogger } from '../lib/log.ts';
import { encodeRecord } from '../lib/logfile/codec.ts';
import { Compactor } from '../lib/logfile/compact.ts';
import type { LogRecord } from '../lib/engine/journal.ts';
import { replayLogfile } from '../lib/logfile/replay.ts';
import { FileJournal } from '../lib/logfile/writer.ts';
import { FoldProcess } from '../cluster/fold-process.ts';

const CLIENTS = 64;
const THROUGHPUT_MS = 3000;
const REPLAY_JOBS = 250_000;
const STATES = ['planned', 'triggered', 'executed', 'planned'] as const;
const BASE_NS = 1775822400000000000n;
const log = silentLogger();
const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => {});
const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;
const job = (id: string, execution: bigint): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });

const root = mkdtempSync(join(process.argv[2] ?? tmpdir(), 'tickd-bench-logfile-'));
process.on('exit', () => rmSync(root, { recursive: true, force: true }));

/** CLIENTS loops of append(perFlush) + await flush() until `stop()`; returns counters. */
function clients(journal: FileJournal, perFlush: number) {
  let running = true;
  let records = 0;
  let worstMs = 0;
  const loops = Array.from({ length: CLIENTS }, async (_, c) => {
    for (let n = 0; running; n++) {
      for (let k = 0; k < perFlush; k++) journal.append(job(`bench.c${c}.${n}.${k}`, BASE_NS + BigInt(n)));
      const t = performance.now();
      await journal.flush();
      worstMs = Math.max(worstMs, performance.now() - t);
      records += perFlush;
    }
  });
  return {
    stop: async () => { running = false; await Promise.all(loops); },
    get records() { return records; },
    get worstMs() { return worstMs; },
  };
}

async function throughput(perFlush: number): Promise<void> {
  const path = join(root, `tp-${perFlush}`);
  const journal = await FileJournal.open({ path, fsync: true, log });
  const load = clients(journal, perFlush);
  const start = performance.now();
  await new Promise((r) => setTimeout(r, THROUGHPUT_MS));
  await load.stop();
  const seconds = (performance.now() - start) / 1000;
  const rounds = journal.rounds;
  await journal.close();
  console.log(`  ${CLIENTS} clients x ${perFlush} record(s)/flush: ${Math.round(load.records / seconds).toLocaleString('en')} records/s durable, ` +
    `${Math.round(rounds / seconds)} fsyncs/s, ${(load.records / rounds).toFixed(1)} records/fsync, worst flush ${load.worstMs.toFixed(1)} ms`);
}

function writeReplayFile(path: string): number {
  // Written in slices so that the records do not inflate this process's RSS before the replay.
  const fd = openSync(path, 'w');
  let count = 0;
  for (const status of STATES) {
    for (let from = 0; from < REPLAY_JOBS; from += 10_000) {
      const slice: LogRecord[] = [];
      for (let i = from; i < Math.min(REPLAY_JOBS, from + 10_000); i++) {
        slice.push({ t: 'job', job: { id: `app.replay.job.${i}`, execution: BASE_NS + BigInt(i) * 1000n, status } });
      }
      writeSync(fd, Buffer.concat(slice.map(encodeRecord)));
      count += slice.length;
    }
  }
  closeSync(fd);
  return count;
}

async function replay(path: string): Promise<void> {
  const store = new Map<string, Job>();
  const rss0 = process.memoryUsage().rss;
  const t = performance.now();
  const result = await replayLogfile(path, (r) => {
    if (r.t === 'job') store.set(r.job.id, r.job);
    else if (r.t === 'job.removed') store.delete(r.id);
  }, log);
  const ms = performance.now() - t;
  console.log(`  ${result.records.toLocaleString('en')} records (${mib(statSync(path).size)}) -> ${store.size.toLocaleString('en')} jobs in ${ms.toFixed(0)} ms ` +
    `(${Math.round(result.records / (ms / 1000)).toLocaleString('en')} records/s), RSS +${mib(process.memoryUsage().rss - rss0)}`);
}

/** Worst event-loop delay while `work` runs: perf_hooks histogram and a 1 ms interval probe. */
async function stalls<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; maxMs: number; p99Ms: number; probeMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let probeMs = 0;
  let last = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    probeMs = Math.max(probeMs, now - last - 1);
    last = now;
  }, 1);
  histogram.enable();
  const t = performance.now();
  const value = await work();
  const ms = performance.now() - t;
  histogram.disable();
  clearInterval(probe);
  return { value, ms, maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, probeMs };
}

const describeStalls = (s: { maxMs: number; p99Ms: number; probeMs: number }) =>
  `max delay ${s.maxMs.toFixed(1)} ms, p99 ${s.p99Ms.toFixed(1)} ms, 1 ms probe worst lateness ${s.probeMs.toFixed(1)} ms`;

async function compaction(path: string, withLoad: boolean): Promise<void> {
  const journal = await FileJournal.open({ path, fsync: true, log });
  const compactor = new Compactor({ path, journal, intervalSec: 0, log, folds: new FoldProcess({ log }) });
  gc(); // the garbage of the earlier steps is not this cycle's doing
  const load = withLoad ? clients(journal, 1) : null;
  if (load !== null) {
    // The same load without compaction first: the stalls the load causes by itself.
    const base = await stalls(() => new Promise((r) => setTimeout(r, 2000)));
    console.log(`  baseline, 2 s of the same load without compaction: ${describeStalls(base)}`);
  }
  const before = statSync(path).size;
  const cycle = await stalls(() => compactor.runOnce());
  const written = load?.records ?? 0;
  await load?.stop();
  await compactor.stop();
  await journal.close();
  console.log(`  ${cycle.value}: ${mib(before)} -> ${mib(statSync(path).size)} in ${cycle.ms.toFixed(0)} ms wall` +
    (load === null ? '' : `; the clients wrote ${written.toLocaleString('en')} records, worst flush ${load.worstMs.toFixed(1)} ms`));
  console.log(`  event loop during the cycle: ${describeStalls(cycle)}`);
}

console.log(`logfile benchmark in ${root}`);
console.log('1. durable throughput (fsync_on_persist = true)');
await throughput(1);
await throughput(32);
const replayPath = join(root, 'replay');
const written = writeReplayFile(replayPath);
console.log(`2. replay of ${written.toLocaleString('en')} job records`);
await replay(replayPath);
console.log('3a. compaction of that file, nothing else running');
await compaction(replayPath, false);
writeReplayFile(replayPath);
console.log('3b. compaction of the same file while 64 clients keep writing (fsync on)');
await compaction(replayPath, true);
