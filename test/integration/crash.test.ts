// Crash test (tickd-protocol(7) COMMANDS; doc/logfile-format.md): clients stream pipelined
// SETs over several connections with fsync on and record every `OK`; the daemon is SIGKILLed at
// a random moment; after the restart every acknowledged SET must be there with its value.
// Iterations chain: each restart is checked, then serves as the next iteration's daemon. The
// last iterations run with compression_interval = 1: most kill a few ms after a cycle began
// (seen as the `.to_compress` file appearing), so kills land in every step of a cycle; every
// third kills after a cycle has completed. The test insists that both kinds really happened.
//
// What "there with its value" means, per key (one connection writes a key, in order, with
// increasing sequence numbers): the value found is one that was sent for that key, no older
// than the last acknowledged one. Unacknowledged writes may or may not have survived, but
// once a value has been seen after a restart it must never change or vanish afterwards.
// Most SETs overwrite a few keys (so compaction has work); every 16th has a key of its own,
// so a lost stretch of records cannot be masked by later overwrites.
//
// The kill delays come from the seeded PRNG; the seed is printed, and CRASH_SEED=<seed> runs
// the same delays again (the daemon's own timing still varies, so a failure may need a few
// runs to recur).
import { expect } from 'chai';
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { connect, type Socket } from 'node:net';
import type { Daemon } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';
import { prng } from '../helpers/prng.ts';
import { tempDir } from '../helpers/tmp.ts';
import { FAR_FUTURE_NS, listLines, logfileDaemon, logfileOf, logRecords } from './logfile-helpers.ts';

const PLAIN_ITERATIONS = 20;
const COMPACTION_ITERATIONS = 10;
const CONNECTIONS = 4;
const WINDOW = 64; // requests in flight per connection
const KEYS = 64; // keys per connection per iteration: most SETs overwrite one of them...
const UNIQUE_EVERY = 16; // ...but every 16th SET has a key of its own, so no loss can hide
const ITER_UNIT = 1_000_000_000_000n;
const CONN_UNIT = 1_000_000_000n;

const isUnique = (seq: number) => seq % UNIQUE_EVERY === UNIQUE_EVERY - 1;
const keyOf = (iter: number, conn: number, seq: number) => `cr.${iter}.${conn}.${isUnique(seq) ? `u${seq}` : seq % KEYS}`;
const valueOf = (iter: number, conn: number, seq: number) => FAR_FUTURE_NS + BigInt(iter) * ITER_UNIT + BigInt(conn) * CONN_UNIT + BigInt(seq);

/** One pipelined connection writing `cr.<iter>.<conn>.*` until the daemon dies. */
class Streamer {
  readonly conn: number;
  readonly iter: number;
  sent = 0;
  /** key -> highest acknowledged sequence number */
  readonly acked = new Map<string, number>();
  ackCount = 0;
  readonly errors: string[] = [];
  readonly closed: Promise<void>;
  private readonly socket: Socket;
  private inflight = 0;
  private buf = '';
  private onFirstAck: (() => void) | null;

  constructor(addr: Daemon['tcp'], iter: number, conn: number, onFirstAck: () => void) {
    this.iter = iter;
    this.conn = conn;
    this.onFirstAck = onFirstAck;
    this.socket = connect(addr.port, addr.host, () => this.pump());
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => this.receive(chunk));
    this.socket.on('error', () => {}); // the daemon is killed under it: expected
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
  }

  private pump(): void {
    if (this.socket.destroyed) return;
    let out = '';
    for (; this.inflight < WINDOW; this.inflight++, this.sent++) {
      out += `${this.sent} SET ${keyOf(this.iter, this.conn, this.sent)} ${valueOf(this.iter, this.conn, this.sent)}\n`;
    }
    if (out !== '') this.socket.write(out);
  }

  private receive(chunk: string): void {
    this.buf += chunk;
    let i;
    while ((i = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 1);
      const m = /^(\d+) OK$/.exec(line);
      if (m === null) {
        this.errors.push(line);
        continue;
      }
      const seq = Number(m[1]);
      this.acked.set(keyOf(this.iter, this.conn, seq), seq); // replies come in order
      this.ackCount++;
      this.inflight--;
      this.onFirstAck?.();
      this.onFirstAck = null;
    }
    this.pump();
  }
}

/** Everything the test knows about one key. */
interface Expectation {
  readonly iter: number;
  readonly conn: number;
  /** highest acknowledged sequence number, -1 if none */
  readonly ackedSeq: number;
  /** sequence numbers sent on the connection (the highest possible value) */
  readonly sent: number;
  /** the value seen after the first restart that followed its iteration */
  seen: string | null;
}

function checkState(jobs: Map<string, string>, expected: Map<string, Expectation>): string[] {
  const problems: string[] = [];
  for (const [key, e] of expected) {
    const line = jobs.get(key);
    if (line === undefined) {
      if (e.ackedSeq >= 0) problems.push(`${key}: acknowledged seq ${e.ackedSeq} but the job is missing`);
      else if (e.seen !== null) problems.push(`${key}: was ${e.seen} after an earlier restart, now missing`);
      continue;
    }
    if (e.seen !== null && e.seen !== line) problems.push(`${key}: was ${e.seen} after an earlier restart, now ${line}`);
    const [status, execution] = line.split(' ');
    const offset = BigInt(execution!) - valueOf(e.iter, e.conn, 0);
    const seq = Number(offset);
    const sameKey = offset >= 0n && offset < CONN_UNIT && keyOf(e.iter, e.conn, seq) === key;
    if (status !== 'planned' || !sameKey || seq >= e.sent) problems.push(`${key}: ${line} was never sent`);
    else if (seq < e.ackedSeq) problems.push(`${key}: holds seq ${seq}, older than the acknowledged seq ${e.ackedSeq}`);
  }
  for (const key of jobs.keys()) if (!expected.has(key)) problems.push(`${key}: unexpected job`);
  return problems;
}

async function readJobs(daemon: Daemon): Promise<Map<string, string>> {
  const c = await LineClient.connect(daemon.tcp);
  try {
    const jobs = new Map<string, string>();
    for (const l of await listLines(c, 'QUERY cr.')) {
      const i = l.indexOf(' ');
      jobs.set(l.slice(0, i), l.slice(i + 1));
    }
    return jobs;
  } finally {
    c.close();
  }
}

/** Resolves once `.to_compress` exists (now or later): a compaction cycle is under way. */
function compactionUnderWay(dir: string): { promise: Promise<void>; close(): void } {
  const leftover = `${logfileOf(dir)}.to_compress`;
  let watcher: FSWatcher | null = null;
  const promise = new Promise<void>((resolve) => {
    watcher = watch(dir, () => { if (existsSync(leftover)) resolve(); });
    if (existsSync(leftover)) resolve();
  });
  return { promise, close: () => (watcher as FSWatcher | null)?.close() };
}

function seed(): number {
  const given = process.env['CRASH_SEED'];
  if (given === undefined) return Math.floor(Math.random() * 2 ** 32);
  if (!/^[0-9]{1,10}$/.test(given) || Number(given) >= 2 ** 32) throw new Error(`CRASH_SEED must be an integer 0..4294967295, got ${given}`);
  return Number(given);
}

const SEED = seed();
const rand = prng(SEED);
const random = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

describe('crash: SIGKILL while clients stream acknowledged SETs', function () {
  this.timeout(120000);
  let daemon: Daemon | undefined;
  after(async () => { await daemon?.kill(); });

  it(`keeps every acknowledged SET across ${PLAIN_ITERATIONS} kills, and ${COMPACTION_ITERATIONS} more during compactions`, async () => {
    console.log(`      seed ${SEED} (CRASH_SEED=${SEED} replays these kill delays)`);
    const dir = tempDir();
    const expected = new Map<string, Expectation>();
    const summary = { acked: 0, killedMidCycle: 0, compactions: 0 };
    const total = PLAIN_ITERATIONS + COMPACTION_ITERATIONS;
    const config = (iter: number) => ({ fsync_on_persist: true, compression_interval: iter < PLAIN_ITERATIONS ? 0 : 1 });
    daemon = await logfileDaemon(dir, config(0), {}, 2);

    for (let iter = 0; iter < total; iter++) {
      const during = iter >= PLAIN_ITERATIONS;
      let firstAck!: () => void;
      const acked = new Promise<void>((resolve) => { firstAck = resolve; });
      const watcher = during ? compactionUnderWay(dir) : null;
      const streamers = Array.from({ length: CONNECTIONS }, (_, conn) => new Streamer(daemon!.tcp, iter, conn, firstAck));
      await acked;
      if (watcher !== null && iter % 3 === 2) {
        // between cycles: after one has completed (so completed cycles are tested too)
        watcher.close();
        await daemon.waitForLog((r) => r['msg'] === 'logfile compacted', 10000);
        await new Promise((r) => setTimeout(r, random(0, 300)));
      } else if (watcher !== null) {
        await watcher.promise;
        watcher.close();
        await new Promise((r) => setTimeout(r, random(0, 25))); // inside the cycle, at any step
      } else {
        await new Promise((r) => setTimeout(r, random(10, 300)));
      }
      const victim = daemon;
      await victim.kill();
      if (existsSync(`${logfileOf(dir)}.to_compress`)) summary.killedMidCycle++;
      await Promise.all(streamers.map((s) => s.closed));
      summary.compactions += logRecords(victim, 'logfile compacted').length;

      for (const s of streamers) {
        expect(s.errors, `iteration ${iter} connection ${s.conn}`).to.deep.equal([]);
        summary.acked += s.ackCount;
        for (let seq = 0; seq < s.sent; seq++) {
          if (seq >= KEYS && !isUnique(seq)) continue; // an overwrite of a key already listed
          const key = keyOf(iter, s.conn, seq);
          expected.set(key, { iter, conn: s.conn, ackedSeq: s.acked.get(key) ?? -1, sent: s.sent, seen: null });
        }
      }
      expect(streamers.reduce((n, s) => n + s.ackCount, 0), `acknowledged SETs in iteration ${iter}`).to.be.greaterThan(0);

      daemon = await logfileDaemon(dir, config(iter + 1), {}, 2);
      const jobs = await readJobs(daemon);
      const problems = checkState(jobs, expected);
      expect(problems.slice(0, 20), `after the restart that followed iteration ${iter}`).to.deep.equal([]);
      for (const [key, e] of expected) e.seen ??= jobs.get(key) ?? null;
    }
    summary.compactions += logRecords(daemon, 'logfile compacted').length;
    expect((await daemon.stop()).code).to.equal(0);
    daemon = undefined;
    console.log(`      ${summary.acked} acknowledged SETs; ${summary.killedMidCycle} kills interrupted a compaction; ${summary.compactions} compactions completed`);
    // the compaction iterations must really have killed compactions, and let some finish
    expect(summary.killedMidCycle).to.be.at.least(3);
    expect(summary.compactions).to.be.at.least(3);
  });
});
