// Store micro-benchmark (run: node bench/store.ts). Prints the cost of 1 000 000 planned
// jobs (insert time, RSS, live bytes per job on and off the JS heap), of looking them up, of
// a full GC with them stored, of churn (half deleted, as many new ones added: the store must
// not grow), of taking them all due in tick-sized batches, and match() ops/s against 1000
// rules, and the attempt records at their capacity (each record evicting the oldest job's):
// the longest single record() call. Pass --expose-gc to node to see live memory apart from garbage (and the full-GC
// line). RSS includes Node's own baseline and the V8 heap headroom left by the insert loop's
// garbage.
import type { Rule } from '../lib/domain/rule.ts';
import type { Attempt } from '../lib/domain/attempt.ts';
import { LastAttempts, MAX_ATTEMPT_RECORDS } from '../lib/store/attempts.ts';
import { JobStore } from '../lib/store/jobs.ts';
import { RuleStore } from '../lib/store/rules.ts';

const JOBS = 1_000_000;
const BATCH = 20_000; // the engine's per-tick cap
const RULES = 1000;
const MATCHES = 2_000_000;
const BASE_NS = 1775822400000000000n;

const noGc = (): void => {};
const gc = (globalThis as { gc?: () => void }).gc ?? noGc;
const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;
const signed = (bytes: number): string => `${bytes < 0 ? '-' : '+'}${mib(Math.abs(bytes))}`;
const msSince = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

function benchJobs(): void {
  gc();
  const before = process.memoryUsage();
  const store = new JobStore();
  let t = process.hrtime.bigint();
  for (let i = 0; i < JOBS; i++) {
    // Spread over one hour, in an order unrelated to insertion, with some equal times.
    const offset = BigInt((i * 7919) % 3_600_000) * 1_000_000n;
    store.put({ id: `job.${i}`, execution: BASE_NS + offset, status: 'planned' });
  }
  const insertMs = msSince(t);
  gc();
  const mem = process.memoryUsage();
  const heapBytes = mem.heapUsed - before.heapUsed;
  // The store's columns are growable SharedArrayBuffers (lib/store/growable.ts), which
  // arrayBuffers leaves out: counted from the store.
  const offHeapBytes = mem.arrayBuffers - before.arrayBuffers + store.columnBytes;
  console.log(`insert ${JOBS} planned jobs: ${insertMs.toFixed(0)} ms (${(JOBS / insertMs * 1000).toFixed(0)}/s)`);
  console.log(`  RSS ${mib(mem.rss)} total (${mib(before.rss)} before); live: heapUsed +${mib(heapBytes)},`
    + ` arrayBuffers and columns +${mib(offHeapBytes)}${gc === noGc ? ' (garbage included: run with --expose-gc)' : ''}`);
  console.log(`  ${((heapBytes + offHeapBytes) / JOBS).toFixed(0)} bytes per job (${(heapBytes / JOBS).toFixed(0)} on the JS heap)`);
  if (gc !== noGc) {
    t = process.hrtime.bigint();
    gc();
    console.log(`  a full (non-incremental) GC with them stored: ${msSince(t).toFixed(1)} ms`);
  }

  // Lookups by fresh strings (as a parsed command brings them), in an order unrelated to slots.
  const lookups = Array.from({ length: 200_000 }, (_, k) => `job.${(k * 104_729) % JOBS}`);
  t = process.hrtime.bigint();
  let found = 0;
  for (const id of lookups) if (store.get(id) !== undefined) found++;
  const getMs = msSince(t);
  console.log(`get() of ${lookups.length} ids in random order: ${(getMs * 1e6 / lookups.length).toFixed(0)} ns each (${found} found)`);

  // Churn: half the jobs deleted, as many new identifiers added; slots and identifier space are reused.
  gc();
  const beforeChurn = process.memoryUsage();
  t = process.hrtime.bigint();
  for (let i = 0; i < JOBS; i += 2) store.delete(`job.${i}`);
  // The same lengths as the ids deleted (`jxb.` for `job.`): blocks are reused within their size class only.
  for (let i = 0; i < JOBS; i += 2) store.put({ id: `jxb.${i}`, execution: BASE_NS + BigInt(i) * 1_000_000n, status: 'planned' });
  const churnMs = msSince(t);
  gc();
  const afterChurn = process.memoryUsage();
  console.log(`churn: ${JOBS / 2} deleted, ${JOBS / 2} new: ${churnMs.toFixed(0)} ms; live: heapUsed ${signed(afterChurn.heapUsed - beforeChurn.heapUsed)},`
    + ` arrayBuffers ${signed(afterChurn.arrayBuffers - beforeChurn.arrayBuffers)}`);

  t = process.hrtime.bigint();
  const now = BASE_NS + 3_600_000_000_000n;
  const taken = new Array<string>(JOBS);
  let count = 0;
  for (;;) {
    const batch = store.takeDue(now, BATCH);
    if (batch.length === 0) break;
    for (const j of batch) taken[count++] = j.id;
  }
  const takeMs = msSince(t);
  console.log(`takeDue all ${count} in batches of ${BATCH}: ${takeMs.toFixed(0)} ms (${(count / takeMs * 1000).toFixed(0)}/s)`);

  t = process.hrtime.bigint();
  for (const id of taken) store.setStatus(id, 'triggered');
  const statusMs = msSince(t);
  const c = store.counts();
  console.log(`setStatus(triggered) on all: ${statusMs.toFixed(0)} ms; counts planned=${c.planned} triggered=${c.triggered}`);
}

function benchRules(): void {
  const store = new RuleStore();
  for (let i = 0; i < RULES; i++) {
    // Nested namespaces of varied depth: team.app. / team.app.task. / team.app.task.sub.
    const team = `team${i % 20}`;
    const app = `app${Math.floor(i / 20) % 10}`;
    const depth = i % 3;
    const pattern = depth === 0 ? `${team}.${app}.` : depth === 1 ? `${team}.${app}.task${i}.` : `${team}.${app}.task${i}.sub${i % 7}.`;
    const rule: Rule = { id: `rule${i}`, pattern, runner: { type: 'shell', command: 'true' } };
    store.put(rule);
  }
  store.put({ id: 'catchall', pattern: '', runner: { type: 'shell', command: 'true' } });
  const jobIds: string[] = [];
  for (let i = 0; i < 10_000; i++) {
    jobIds.push(`team${i % 25}.app${i % 10}.task${(i * 31) % 1200}.sub${i % 7}.run${i}`);
  }
  let hits = 0;
  const t = process.hrtime.bigint();
  for (let i = 0; i < MATCHES; i++) {
    if (store.match(jobIds[i % jobIds.length]!)!.id !== 'catchall') hits++;
  }
  const ms = msSince(t);
  const lengths = (store as unknown as { lengths: number[] }).lengths.length;
  console.log(`match() with ${store.size} rules (${lengths} distinct pattern lengths): ${(MATCHES / ms * 1000).toFixed(0)} ops/s (${hits} non-catch-all hits of ${MATCHES})`);
}

// Full, every record evicts a job and adds one: a Map from job to slot kept each deleted entry
// as a hole until it rebuilt its table, in one call (15-23 ms every ~160 000 records).
function benchAttempts(): void {
  const RECORDS = 10 * MAX_ATTEMPT_RECORDS;
  const store = new LastAttempts();
  const attempt: Attempt = { rule: 'r', runner: 'http', startedNs: BASE_NS, latenessNs: 0n, durationNs: 1_000_000n, outcome: { kind: 'http_response', status: 200 } };
  let longest = 0;
  let over2 = 0;
  const t = process.hrtime.bigint();
  for (let i = 0; i < RECORDS; i++) {
    const id = `sched.${i % 7919}.job-${i}:2026-11-28T10:26:00Z`;
    const s = performance.now();
    store.record(id, attempt);
    const ms = performance.now() - s;
    if (ms > longest) longest = ms;
    if (ms > 2) over2++;
  }
  console.log(`attempts: ${RECORDS} records through a store of ${store.capacity}: ${msSince(t).toFixed(0)} ms; the longest record() ${longest.toFixed(1)} ms, ${over2} over 2 ms (collections included)`);
}

benchJobs();
benchRules();
benchAttempts();
