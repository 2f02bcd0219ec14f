// Not part of `npm test` (about 100 s, and it finds the two defects tickd(8) BUGS names, which
// are still open): run it with `npm run fuzz`, and make it part of the suite once it passes.
//
// Cluster mode under a flood of foreign messages (tickd(8) SECURITY, Quarantine): no message
// can stop the cluster, and none changes what it acknowledged. Three tickd nodes on three
// routed nats-servers serve a client on every node (SETs far ahead and due now, SETs again,
// REMOVEs, GETs of jobs that never exist) while a fuzzer, a NATS client without the cluster's
// secret, publishes a few thousand messages onto every subject tickd uses: random bytes,
// truncated and byte-flipped copies of real messages, real messages replayed unchanged onto
// their own and other subjects, records it would like applied (unsealed, sealed with another
// secret, or a record of another cluster that shares the secret), and batches likewise:
//
//   the stream              <name>.j.*, <name>.r.*, <name>.<anything>, live identifiers' too
//   the checkpoint stream   <name>-checkpoint.head and .c.<id>.<n>, the real ones' too in the
//                           first half of the run; beside them in the second, so that the
//                           replays then read checkpoints among the junk
//   forwarding              $TICKD.<name>.forward: published and requested; the nodes' own
//                           batches copied 2 s or more later, and answered first in the
//                           leader's name (forged answers)
//   the lease bucket        <name>-lease: LEASE_JUNK foreign values of the key `leader` (each
//                           leaves the cluster without a leader until the bucket's TTL, which
//                           is --lease-ttl, expires it: the accepted denial of service), other keys
//   the nodes bucket        <name>-nodes: junk, stale and copied reports, up to MEMBER_KEYS keys
//
// Then: no node exited or crashed, a SET is acknowledged through every node within RECOVER_MS,
// every client request was answered, every acknowledged write is there with its time through
// every node (QUERY, and GET of some) and an acknowledged REMOVE stays removed, nothing the
// fuzzer wrote is there (no job, no rule, no marker file of its shell rule), no junk batch
// ran, no copy of an acknowledged batch ran again, no client took a forged answer, every node
// quarantined; the same after a cold start of all three after SIGTERM (with more junk beside
// the checkpoint, which every replay must read) and after SIGKILL (with junk over it). The
// JetStream API is never called destructively (no purge, no deletion: a denial of service
// outside this test). Every finding is gathered, printed with what the fuzzer did to the
// identifier, and failed at the end; the nodes' logs of a failed run are kept in the temporary
// directory (tickd-fuzz-<seed>-<start>-<node>.log).
//
// The fuzzer's choices come from a seeded PRNG, its seed printed at the start:
// TICKD_FUZZ_SEED=<seed> replays them (the timing of a cluster does not replay).
import { expect } from 'chai';
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import type { Command, Reply } from '../../lib/domain/command.ts';
import type { LogRecord } from '../../lib/engine/journal.ts';
import { checkpointNames, readHead, sealHead, type CheckpointHead } from '../../lib/jetstream/checkpoint.ts';
import { ClusterKeys } from '../../lib/jetstream/cluster-keys.ts';
import { sealAnswer, sealRequest } from '../../lib/jetstream/forward-seal.ts';
import { forwardingSubject } from '../../lib/jetstream/forwarding.ts';
import { SEAL_BYTES, sealRecord } from '../../lib/jetstream/record-seal.ts';
import { clusterSubjects, decodeToken, encodeToken } from '../../lib/jetstream/subjects.ts';
import { encodeRecord, FRAME_HEADER_BYTES } from '../../lib/logfile/codec.ts';
import { LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { testKeys } from '../helpers/cluster-secret.ts';
import { nodeArgs, waitForLeader } from '../helpers/cluster-nodes.ts';
import { Daemon } from '../helpers/daemon.ts';
import { closeNatsClients, connectNats, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { prng } from '../helpers/prng.ts';
import { tempDir } from '../helpers/tmp.ts';

const NAME = 'fz';
const NODES = ['fz-a', 'fz-b', 'fz-c'] as const;
const TTL = '2s';
const FUZZ_MS = 20_000;
const FUZZ_MESSAGES = 3_000;
/** Published while every node is down, before each cold start. */
const DOWN_MESSAGES = 150;
/** Distinct keys the fuzzer writes in the nodes bucket at most. */
const MEMBER_KEYS = 300;
/** Foreign values of the lease key during the run (each may leave the cluster without a leader for --lease-ttl). */
const LEASE_JUNK = 3;
/** How long the cluster may take to serve a SET on every node once the fuzzing stopped. */
const RECOVER_MS = 30_000;
/** How long a node may take to start (a loaded two-core machine has taken 20 s). */
const START_MS = 60_000;
/**
 * The fuzzer publishes in ticks; the stream's junk only every STREAM_TICK_EVERY ticks, in one
 * burst: each burst fences the leader's next write (it steps down, rebuilds its copy and leads
 * again), and the ticks between let it write, so that writes are acknowledged all along.
 */
const TICK_MS = 200;
const STREAM_TICK_EVERY = 10;
/** Far in the future: these jobs never fire. */
const FAR = 4_000_000_000_000_000_000n;
/** A forwarded request: 0xF2, key id (4), sealed at (8), nonce (16), HMAC (32), payload (forward-seal.ts). */
const REQUEST_HEAD = 61;
const NONCE_AT = 13;

function seed(): number {
  const given = process.env['TICKD_FUZZ_SEED'];
  if (given === undefined) return Math.floor(Math.random() * 2 ** 32);
  if (!/^[0-9]{1,10}$/.test(given) || Number(given) >= 2 ** 32) throw new Error(`TICKD_FUZZ_SEED must be an integer 0..4294967295, got ${given}`);
  return Number(given);
}

const SEED = seed();
const TOKEN_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-';

/** Choices from a seeded PRNG (test/helpers/prng.ts). */
class Rng {
  private readonly next: () => number;
  constructor(seed: number) { this.next = prng(seed); }
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(xs: readonly T[]): T { return xs[Math.floor(this.next() * xs.length)]!; }
  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(this.next() * 256);
    return b;
  }
  token(max = 24): string {
    let s = '';
    for (let i = this.int(1, max); i > 0; i--) s += TOKEN_CHARS[this.int(0, TOKEN_CHARS.length - 1)];
    return s;
  }
  /** A copy cut short (never whole). */
  truncated(b: Uint8Array): Buffer {
    return Buffer.from(b.subarray(0, b.length === 0 ? 0 : this.int(0, b.length - 1)));
  }
  /** A copy with one byte changed. */
  flipped(b: Uint8Array): Buffer {
    const c = Buffer.from(b);
    if (c.length > 0) c[this.int(0, c.length - 1)]! ^= this.int(1, 255);
    return c;
  }
}

/** The fuzzer's choices; the forger's (answering as it overhears) and the load's apart, so that their timing leaves the fuzzer's sequence alone. */
const fuzz = new Rng(SEED);
const forge = new Rng(SEED ^ 0x9e3779b9);
const loadRng = new Rng(SEED ^ 0x85ebca6b);

/** Another cluster's secret: what it seals does not verify here. */
const otherKeys = new ClusterKeys(['x'.repeat(40)]);
/** A second cluster that shares this one's secret seals for its own name: no record, batch or report of this one. */
const OTHER_CLUSTER = 'fzother';
const subjects = clusterSubjects(NAME);
const cp = checkpointNames(NAME);
const bare = (rec: LogRecord): Buffer => encodeRecord(rec).subarray(FRAME_HEADER_BYTES);

type Expect = { acked: bigint | null; maybe: bigint[]; removed: 'no' | 'yes' | 'maybe' };

/**
 * One client connection's load, pipelined `depth` deep until stopped: SETs far in the future
 * (some SET again to a new time once acknowledged), SETs due now (the rule f. runs them),
 * REMOVEs of acknowledged jobs, and GETs of jobs that never exist (a forged answer would make
 * one exist). What every identifier may hold at the end is kept in `expect`.
 */
class Load {
  readonly expect = new Map<string, Expect>();
  readonly sent = new Set<string>();
  /** Every command answered OK: `SET <id> <time>`, `REMOVE <id>`. */
  readonly ackedCommands = new Set<string>();
  readonly replies = new Map<string, number>();
  /** GETs of jobs that never existed that were answered OK: forged answers taken. */
  readonly forged: string[] = [];
  /** Answers that contradict earlier ones (a REMOVE of an acknowledged job: not_found), or come out of order. */
  readonly anomalies: string[] = [];
  private readonly resettable: string[] = [];
  private readonly removable: string[] = [];
  private stopped = false;
  private readonly pending: Array<{ rid: string; done: (line: string) => void; fail: (err: Error) => void }> = [];
  readonly done: Promise<void>;

  private readonly c: LineClient;
  private readonly node: string;

  constructor(c: LineClient, node: string, depth = 3) {
    this.c = c;
    this.node = node;
    void this.read();
    this.done = Promise.all(Array.from({ length: depth }, (_, lane) => this.lane(lane, depth))).then(() => {});
  }

  private async read(): Promise<void> {
    for (;;) {
      let line: string | null;
      try {
        line = await this.c.readLine(120_000);
      } catch (err) {
        line = null;
        for (const p of this.pending.splice(0)) p.fail(err as Error);
      }
      if (line === null) {
        for (const p of this.pending.splice(0)) p.fail(new Error('connection closed'));
        return;
      }
      const p = this.pending.shift();
      if (p === undefined || !line.startsWith(`${p.rid} `)) {
        this.anomalies.push(`a reply out of order: ${line} (waiting for ${p?.rid})`);
        p?.fail(new Error('a reply out of order'));
        continue;
      }
      p.done(line.slice(p.rid.length + 1));
    }
  }

  private send(rid: string, text: string): Promise<string> {
    return new Promise((done, fail) => {
      this.pending.push({ rid, done, fail });
      this.c.write(`${rid} ${text}\n`);
    });
  }

  private entry(id: string): Expect {
    let e = this.expect.get(id);
    if (e === undefined) this.expect.set(id, (e = { acked: null, maybe: [], removed: 'no' }));
    return e;
  }

  private count(reply: string): void {
    const kind = reply.startsWith('ERROR') ? reply.split(' ').slice(0, 2).join(' ') : reply.split(' ')[0]!;
    this.replies.set(kind, (this.replies.get(kind) ?? 0) + 1);
  }

  private async lane(lane: number, depth: number): Promise<void> {
    for (let k = lane; !this.stopped; k += depth) {
      const rid = `${this.node}-${k}`;
      let reply: string;
      try {
        if (k % 11 === 3) {
          const id = `nx.${this.node}.${k}`;
          reply = await this.send(rid, `GET ${id}`);
          if (!reply.startsWith('ERROR')) this.forged.push(`GET ${id}: ${reply}`);
        } else if (k % 7 === 5 && this.resettable.length > 0) {
          const id = this.resettable.splice(loadRng.int(0, this.resettable.length - 1), 1)[0]!;
          const e = this.entry(id);
          const time = e.acked! + 1_000_000_000n;
          reply = await this.send(rid, `SET ${id} ${time}`);
          if (reply === 'OK') {
            this.ackedCommands.add(`SET ${id} ${time}`);
            e.acked = time;
            e.maybe = [];
          } else {
            e.maybe.push(time);
          }
        } else if (k % 13 === 8 && this.removable.length > 0) {
          const id = this.removable.splice(loadRng.int(0, this.removable.length - 1), 1)[0]!;
          const e = this.entry(id);
          reply = await this.send(rid, `REMOVE ${id}`);
          if (reply === 'OK') this.ackedCommands.add(`REMOVE ${id}`);
          if (reply === 'OK') e.removed = 'yes';
          else if (reply.startsWith('ERROR not_found')) this.anomalies.push(`REMOVE of acknowledged ${id}: ${reply}`);
          else e.removed = 'maybe';
        } else {
          const due = k % 10 === 9;
          const id = `${due ? 'f' : 'w'}.${this.node}.${k}`;
          const time = due ? nowNs() : FAR + BigInt(k) * 1_000_000n;
          this.sent.add(id);
          const e = this.entry(id);
          reply = await this.send(rid, `SET ${id} ${time}`);
          if (reply === 'OK') {
            this.ackedCommands.add(`SET ${id} ${time}`);
            e.acked = time;
            if (!due) (loadRng.chance(0.5) ? this.resettable : this.removable).push(id);
          } else {
            e.maybe.push(time);
          }
        }
      } catch {
        return; // the connection closed or went silent for minutes: the checks below tell
      }
      this.count(reply);
    }
  }

  get acked(): string[] {
    return [...this.expect].filter(([, e]) => e.acked !== null).map(([id]) => id);
  }

  /** Stops sending; resolves once every request sent is answered. */
  stop(): Promise<void> {
    this.stopped = true;
    return this.done;
  }
}

/** What the fuzzer copies: real messages of the cluster, refreshed as it goes. */
interface Real {
  records: Array<{ subject: string; seq: number; data: Uint8Array }>;
  heads: Array<{ data: Uint8Array; head: CheckpointHead }>;
  chunks: Array<{ subject: string; data: Uint8Array }>;
  reports: Array<{ key: string; data: Uint8Array }>;
  lease: Uint8Array | null;
  requests: Array<{ data: Uint8Array; at: number }>;
}

/**
 * The attacker: a NATS client of its own, without the cluster's secret (it seals only with
 * another secret, or for another cluster's name), publishing onto every subject tickd uses.
 */
class Fuzzer {
  readonly counts = new Map<string, number>();
  /** Stream subjects of live identifiers the fuzzer published onto (their record replaced: max_msgs_per_subject 1). */
  readonly overwritten = new Set<string>();
  /** Copies of nodes' batches that the leader ran (answered with something): ids whose original SET was acknowledged. */
  readonly copiesRun: string[] = [];
  /** Copies that the leader ran, of batches no client was told had run (they may not have, before). */
  readonly copiesRunMaybeFirst: string[] = [];
  /** Identifiers named by the copies the leader ran. */
  readonly rerun = new Set<string>();
  /** Junk requests that the leader answered with anything but the empty message. */
  readonly answered: string[] = [];
  /** Jobs whose SET the fuzzer answered in the leader's name (a forged answer; refused by a follower that checks the leader's seal). */
  readonly forgedFor = new Set<string>();
  readonly real: Real = { records: [], heads: [], chunks: [], reports: [], lease: null, requests: [] };
  private readonly memberKeys = new Set<string>();
  private lastSeq = 0;
  private forging = false;
  /** The cluster's checkpoint (its head and chunks) is left alone: what is published in its stream goes beside it. */
  private spareCheckpoint = false;
  private readonly inbox = `_INBOX_FZ${SEED}`;
  private nc!: NatsConnection;
  private js!: JetStreamClient;
  private jsm!: JetStreamManager;
  private leaseKv!: KV;
  private nodesKv!: KV;
  private readonly inflight = new Set<Promise<void>>();

  private readonly urls: string;
  private readonly marker: string;
  private readonly acked: () => string[];
  private readonly ackedTime: (id: string) => bigint | null;
  private readonly wasAcked: (c: Command) => boolean;

  constructor(urls: string, marker: string, acked: () => string[], ackedTime: (id: string) => bigint | null, wasAcked: (c: Command) => boolean) {
    this.urls = urls;
    this.marker = marker;
    this.acked = acked;
    this.ackedTime = ackedTime;
    this.wasAcked = wasAcked;
  }

  async open(listen: boolean): Promise<void> {
    this.nc = await connectNats(this.urls, { inboxPrefix: this.inbox });
    this.js = jetstream(this.nc, { timeout: 5_000 });
    this.jsm = await jetstreamManager(this.nc);
    this.leaseKv = await new Kvm(this.nc).open(`${NAME}-lease`);
    this.nodesKv = await new Kvm(this.nc).open(`${NAME}-nodes`);
    if (listen) this.nc.subscribe(forwardingSubject(NAME), { callback: (err, m) => { if (err === null) this.overheard(m); } });
  }

  async close(): Promise<void> {
    await Promise.all(this.inflight);
    await this.nc.close().catch(() => {});
  }

  private tally(what: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
  }

  get total(): number {
    let n = 0;
    for (const [k, v] of this.counts) if (!k.startsWith('answer ')) n += v;
    return n;
  }

  private launch(what: string, op: () => Promise<void>): void {
    this.tally(what);
    const p: Promise<void> = op().catch(() => { /* refused by NATS (no stream yet, a value too large): it counts as sent */ })
      .finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }

  /** A node's forwarded request, overheard: kept to copy later, and, while forging, answered first in the leader's name. */
  private overheard(m: Msg): void {
    if (m.reply?.startsWith(this.inbox) === true) return; // the fuzzer's own
    const data = Buffer.from(m.data);
    this.real.requests.push({ data, at: Date.now() });
    if (this.real.requests.length > 500) this.real.requests.shift();
    if (!this.forging || m.reply === undefined || !forge.chance(0.3)) return;
    const cmds = commandsOf(data);
    const fake = serialize((cmds ?? [{ op: 'stat' }]).map(forgedReply));
    const nonce = data.length >= REQUEST_HEAD ? data.subarray(NONCE_AT, NONCE_AT + 16) : forge.bytes(16);
    const kind = forge.pick(['unsealed', 'other secret', 'other cluster', 'random', 'empty'] as const);
    const body = kind === 'unsealed' ? fake
      : kind === 'other secret' ? sealAnswer(otherKeys, NAME, nonce, fake)
        : kind === 'other cluster' ? sealAnswer(testKeys, OTHER_CLUSTER, nonce, fake)
          : kind === 'random' ? forge.bytes(forge.int(1, 2000)) : null;
    this.tally(`answer ${kind}`);
    for (const c of cmds ?? []) if (c.op === 'job.set') this.forgedFor.add(c.id);
    try {
      if (body !== null) m.respond(body);
      m.respond(new Uint8Array(0));
    } catch { /* the connection closing */ }
  }

  /** Copies of real messages: a few records of acknowledged jobs, the checkpoint head and chunks, reports, the lease. */
  async refresh(): Promise<void> {
    const ids = this.acked();
    for (let i = 0; i < 4 && ids.length > 0; i++) {
      const subject = subjects.job(fuzz.pick(ids));
      const m = await this.jsm.streams.getMessage(NAME, { last_by_subj: subject }).catch(() => null);
      if (m !== null) this.keep(this.real.records, { subject: m.subject, seq: m.seq, data: m.data }, 40);
    }
    const rule = await this.jsm.streams.getMessage(NAME, { last_by_subj: subjects.rule('f.') }).catch(() => null);
    if (rule !== null) this.keep(this.real.records, { subject: rule.subject, seq: rule.seq, data: rule.data }, 40);
    const h = await this.jsm.streams.getMessage(cp.stream, { last_by_subj: cp.head }).catch(() => null);
    if (h !== null) {
      try {
        const head = h.json<CheckpointHead>();
        if (typeof head.id === 'string' && Array.isArray(head.seqs)) {
          if (!this.real.heads.some((x) => x.head.id === head.id)) this.keep(this.real.heads, { data: h.data, head }, 10);
          for (const seq of head.seqs.slice(0, 2)) {
            const c = await this.jsm.streams.getMessage(cp.stream, { seq }).catch(() => null);
            if (c !== null) this.keep(this.real.chunks, { subject: c.subject, data: c.data }, 10);
          }
        }
      } catch { /* a head the fuzzer itself published */ }
    }
    for (const key of NODES) {
      const e = await this.nodesKv.get(key).catch(() => null);
      if (e !== null && e.operation === 'PUT' && e.value.length > 0 && e.string().includes('"mac"')) this.keep(this.real.reports, { key, data: e.value }, 20);
    }
    const l = await this.leaseKv.get('leader').catch(() => null);
    if (l !== null && l.operation === 'PUT' && l.string().includes('"token"')) this.real.lease = l.value;
  }

  private keep<T>(xs: T[], x: T, max: number): void {
    xs.push(x);
    if (xs.length > max) xs.splice(fuzz.int(0, xs.length - 1), 1);
  }

  /**
   * Publishes `budget` messages over `ms`, in ticks of TICK_MS: the stream's junk in one burst
   * every STREAM_TICK_EVERY ticks (each fences the leader's next write: it steps down,
   * rebuilds its copy and leads again; a tick of junk at a time lets it write in between), the
   * rest spread over the other ticks. `leaseJunk` foreign values of the lease key on the way.
   */
  async run(ms: number, budget: number, leaseJunk: number): Promise<void> {
    this.forging = true;
    const started = performance.now();
    const ticks = Math.floor(ms / TICK_MS);
    const streamTicks = Math.ceil(ticks / STREAM_TICK_EVERY);
    const streamShare = Math.floor(budget * 0.4);
    const perStreamTick = Math.ceil(streamShare / streamTicks);
    const perOtherTick = Math.ceil((budget - streamShare) / Math.max(1, ticks - streamTicks));
    const leaseAt = new Set(Array.from({ length: leaseJunk }, (_, i) => Math.floor(((i + 1) * ticks) / (leaseJunk + 1))));
    for (let t = 0; t < ticks && this.total < budget; t++) {
      // The first half replaces the checkpoint's head and chunks (a replay then reads the whole
      // stream); the second leaves them, so that replays read checkpoints among the junk.
      this.spareCheckpoint = t >= ticks / 2;
      if (t % 5 === 1) await this.refresh().catch(() => {});
      const n = Math.min(budget - this.total, t % STREAM_TICK_EVERY === 0 ? perStreamTick : perOtherTick);
      for (let i = 0; i < n; i++) {
        if (t % STREAM_TICK_EVERY === 0) this.stream();
        else fuzz.pick([() => this.checkpoint(), () => this.forward(), () => this.forward(), () => this.member()])();
      }
      if (leaseAt.has(t)) this.lease(true);
      if (t % 20 === 7) this.lease(false);
      while (this.inflight.size > 300) await Promise.race(this.inflight);
      const next = started + (t + 1) * TICK_MS;
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    }
    this.forging = false;
    await Promise.all(this.inflight);
  }

  /** `n` messages at once, every kind, while no node runs (what a cold start replays); the checkpoint spared or not. */
  async down(n: number, spareCheckpoint: boolean): Promise<void> {
    this.spareCheckpoint = spareCheckpoint;
    await this.refresh().catch(() => {});
    for (let i = 0; i < n; i++) fuzz.pick([() => this.stream(), () => this.stream(), () => this.checkpoint(), () => this.member(), () => this.forward()])();
    this.lease(true);
    await Promise.all(this.inflight);
  }

  private publishStream(what: string, subject: string, body: Uint8Array): void {
    const id = idOf(subject);
    if ((id !== null && this.ackedTime(id) !== null) || subject === subjects.rule('f.')) {
      this.overwritten.add(subject);
      what += ' (a live subject)';
    }
    this.launch(what, async () => {
      const ack = await this.js.publish(subject, body);
      this.lastSeq = Math.max(this.lastSeq, ack.seq);
    });
  }

  /** A subject of the stream: a new identifier's, a live one's, or none of tickd's shapes. */
  private streamSubject(): string {
    const ids = this.acked();
    switch (fuzz.int(0, 5)) {
      case 0: return subjects.job(`evil.${fuzz.token()}`);
      case 1: return `${NAME}.j.${fuzz.token()}`;
      case 2: return `${NAME}.r.${fuzz.token()}`;
      case 3: return `${NAME}.${fuzz.token(8)}.${fuzz.token(8)}`;
      case 4: return ids.length > 0 ? subjects.job(fuzz.pick(ids)) : `${NAME}.${fuzz.token()}`;
      default: return fuzz.pick([subjects.rule('f.'), `${NAME}.j.${encodeToken('w.fz-a.0')}_`, `${NAME}.${fuzz.token()}`]);
    }
  }

  /** A record the fuzzer would like applied: its shell rule, its jobs, the removal or change of real ones. */
  private evilRecord(): { rec: LogRecord; subject: string } {
    const ids = this.acked();
    const real = ids.length > 0 ? fuzz.pick(ids) : 'w.fz-a.0';
    switch (fuzz.int(0, 4)) {
      case 0: return { rec: { t: 'rule', rule: { id: 'evil.', pattern: 'evil.', runner: { type: 'shell', command: `touch ${this.marker}` } } }, subject: subjects.rule('evil.') };
      case 1: {
        const id = `evil.${fuzz.token(10)}`;
        return { rec: { t: 'job', job: { id, execution: 1n, status: 'planned' } }, subject: subjects.job(id) };
      }
      case 2: return { rec: { t: 'job.removed', id: real }, subject: subjects.job(real) };
      case 3: return { rec: { t: 'rule.removed', id: 'f.' }, subject: subjects.rule('f.') };
      default: return { rec: { t: 'job', job: { id: real, execution: 5n, status: 'planned' } }, subject: subjects.job(real) };
    }
  }

  private stream(): void {
    const records = this.real.records;
    const r = records.length > 0 ? fuzz.pick(records) : null;
    switch (fuzz.int(0, 9)) {
      case 0: case 1: this.publishStream('stream: random bytes', this.streamSubject(), fuzz.bytes(fuzz.int(0, 2000))); return;
      case 2: if (r !== null) return this.publishStream('stream: truncated record', fuzz.chance(0.5) ? r.subject : this.streamSubject(), fuzz.truncated(r.data)); break;
      case 3: if (r !== null) return this.publishStream('stream: byte-flipped record', fuzz.chance(0.5) ? r.subject : this.streamSubject(), fuzz.flipped(r.data)); break;
      case 4: if (r !== null) return this.publishStream('stream: record replayed onto its subject', r.subject, r.data); break;
      case 5: if (r !== null) return this.publishStream('stream: record replayed onto another subject', this.streamSubject(), r.data); break;
      case 6: {
        // Sealed with another cluster's secret, for the sequence it lands at.
        const e = this.evilRecord();
        const payload = r !== null && fuzz.chance(0.3) ? Buffer.from(r.data).subarray(SEAL_BYTES) : bare(e.rec);
        return this.publishStream('stream: sealed with another secret', e.subject, sealRecord(otherKeys, NAME, e.subject, this.lastSeq + 1, payload));
      }
      case 7: {
        // What a cluster sharing the secret wrote to its own stream, copied here.
        const e = this.evilRecord();
        return this.publishStream('stream: another cluster\'s record', e.subject, sealRecord(testKeys, OTHER_CLUSTER, e.subject, this.lastSeq + 1, bare(e.rec)));
      }
      case 8: {
        // What an older tickd wrote, or anyone who read doc/logfile-format.md: a bare payload.
        const e = this.evilRecord();
        return this.publishStream('stream: unsealed record', e.subject, bare(e.rec));
      }
      default: break;
    }
    this.publishStream('stream: random bytes', this.streamSubject(), fuzz.bytes(fuzz.int(0, 2000)));
  }

  private checkpoint(): void {
    const heads = this.real.heads;
    const chunks = this.real.chunks;
    const h = heads.length > 0 ? fuzz.pick(heads) : null;
    const c = chunks.length > 0 ? fuzz.pick(chunks) : null;
    const chunkSubject = (): string => (h !== null && fuzz.chance(0.7) ? cp.chunk(h.head.id, fuzz.int(0, Math.max(0, h.head.chunks - 1) + 1)) : cp.chunk(fuzz.token(22), fuzz.int(0, 3)));
    const fakeHead = (): CheckpointHead => ({
      seq: fuzz.int(1, 100_000), created: h?.head.created ?? new Date().toISOString(), id: h?.head.id ?? fuzz.token(22),
      seqs: [fuzz.int(1, 1000)], first: fuzz.int(1, 1000), last: fuzz.int(1, 1000), chunks: 1, bytes: fuzz.int(0, 5000), records: fuzz.int(0, 100),
    });
    let what: string;
    let subject: string;
    let body: Uint8Array;
    switch (fuzz.int(0, 9)) {
      case 0: [what, subject, body] = ['checkpoint: random head', cp.head, fuzz.bytes(fuzz.int(0, 2000))]; break;
      case 1: [what, subject, body] = ['checkpoint: random chunk', chunkSubject(), fuzz.bytes(fuzz.int(0, 2000))]; break;
      case 2: [what, subject, body] = ['checkpoint: unsealed head', cp.head, Buffer.from(JSON.stringify(fakeHead()))]; break;
      case 3: [what, subject, body] = ['checkpoint: head sealed with another secret', cp.head, Buffer.from(JSON.stringify(sealHead(otherKeys, fakeHead())))]; break;
      case 4: {
        // Another cluster's real head (sealed with the shared secret, of its own stream).
        const other = sealHead(testKeys, { ...fakeHead(), created: '2001-01-01T00:00:00.000Z' });
        [what, subject, body] = ['checkpoint: another cluster\'s head', cp.head, Buffer.from(JSON.stringify(other))];
        break;
      }
      case 5:
        if (h !== null) [what, subject, body] = [fuzz.chance(0.5) ? 'checkpoint: head replayed (an old one, maybe)' : 'checkpoint: head truncated', cp.head, fuzz.chance(0.5) ? h.data : fuzz.truncated(h.data)];
        else [what, subject, body] = ['checkpoint: random head', cp.head, fuzz.bytes(fuzz.int(0, 200))];
        break;
      case 6:
        if (c !== null) [what, subject, body] = ['checkpoint: chunk replayed onto its subject', c.subject, c.data];
        else [what, subject, body] = ['checkpoint: random chunk', chunkSubject(), fuzz.bytes(fuzz.int(0, 2000))];
        break;
      case 7:
        if (c !== null) [what, subject, body] = ['checkpoint: chunk truncated or flipped', fuzz.chance(0.5) ? c.subject : chunkSubject(), fuzz.chance(0.5) ? fuzz.truncated(c.data) : fuzz.flipped(c.data)];
        else [what, subject, body] = ['checkpoint: random chunk', chunkSubject(), fuzz.bytes(fuzz.int(0, 2000))];
        break;
      case 8: {
        // Frames of records the fuzzer would like applied, as a chunk of a checkpoint.
        const frames = Buffer.concat(Array.from({ length: fuzz.int(1, 5) }, () => encodeRecord(this.evilRecord().rec)));
        [what, subject, body] = ['checkpoint: evil frames as a chunk', chunkSubject(), frames];
        break;
      }
      default: {
        const r = this.real.records.length > 0 ? fuzz.pick(this.real.records).data : fuzz.bytes(100);
        [what, subject, body] = ['checkpoint: a stream record there', fuzz.chance(0.5) ? cp.head : chunkSubject(), r];
      }
    }
    if (this.spareCheckpoint && (subject === cp.head || this.real.heads.some((x) => subject.startsWith(cp.chunks(x.head.id).slice(0, -1))))) {
      // The real checkpoint is left readable: the junk goes beside it.
      subject = cp.chunk(fuzz.token(22), fuzz.int(0, 3));
      what += ' (beside the checkpoint)';
    }
    this.launch(what, async () => { await this.js.publish(subject, body); });
  }

  private evilBatch(): Command[] {
    const ids = this.acked();
    return [
      { op: 'rule.set', rule: { id: 'evil.', pattern: 'evil.', runner: { type: 'shell', command: `touch ${this.marker}` } } },
      { op: 'job.set', id: `evil.${fuzz.token(8)}`, execution: 1n },
      ...(ids.length > 0 ? [{ op: 'job.remove', id: fuzz.pick(ids) } as const] : []),
    ];
  }

  private forward(): void {
    const subject = forwardingSubject(NAME);
    const copies = this.real.requests.filter((q) => Date.now() - q.at > 2_000);
    const copy = copies.length > 0 ? fuzz.pick(copies) : null;
    let what: string;
    let body: Uint8Array;
    switch (fuzz.int(0, 7)) {
      case 0: [what, body] = ['forward: random bytes', fuzz.bytes(fuzz.int(0, 2000))]; break;
      case 1: [what, body] = ['forward: unsealed batch', serialize(this.evilBatch())]; break;
      case 2: [what, body] = ['forward: batch sealed with another secret', sealRequest(otherKeys, NAME, '', serialize(this.evilBatch())).body]; break;
      case 3: [what, body] = ['forward: another cluster\'s batch', sealRequest(testKeys, OTHER_CLUSTER, '', serialize(this.evilBatch())).body]; break;
      case 4: case 5:
        if (copy !== null) [what, body] = ['forward: a node\'s batch copied (2 s or more later)', copy.data];
        else [what, body] = ['forward: random bytes', fuzz.bytes(fuzz.int(0, 200))];
        break;
      default:
        if (copy !== null) [what, body] = ['forward: a node\'s batch truncated or flipped', fuzz.chance(0.5) ? fuzz.truncated(copy.data) : fuzz.flipped(copy.data)];
        else [what, body] = ['forward: random bytes', fuzz.bytes(fuzz.int(0, 200))];
    }
    if (fuzz.chance(0.3)) {
      this.launch(`${what} (published)`, async () => { this.nc.publish(subject, body); });
      return;
    }
    this.launch(`${what} (requested)`, async () => {
      const answer = await this.nc.request(subject, body, { timeout: 3_000 });
      if (answer.data.length === 0) return;
      // Run: anything but the empty message is an answer of a batch that ran.
      const cmds = commandsOf(Buffer.from(body)) ?? [];
      const text = `${what}: ${cmds.map((c) => `${c.op} ${'id' in c ? c.id : ''}`).join(', ')}`;
      if (what.includes('copied')) for (const c of cmds) if ('id' in c) this.rerun.add(c.id);
      if (!what.includes('copied')) this.answered.push(text);
      // A copy of a batch a client was told had run: it ran twice.
      else if (cmds.some((c) => this.wasAcked(c))) this.copiesRun.push(text);
      else this.copiesRunMaybeFirst.push(text);
    });
  }

  private member(): void {
    const reports = this.real.reports;
    const r = reports.length > 0 ? fuzz.pick(reports) : null;
    const key = (): string => {
      if (fuzz.chance(0.15)) return fuzz.pick(NODES);
      if (this.memberKeys.size >= MEMBER_KEYS) return fuzz.pick([...this.memberKeys]);
      const k = fuzz.token(16);
      this.memberKeys.add(k);
      return k;
    };
    const report = (node: string, keys: ClusterKeys, cluster: string): string => {
      const role = fuzz.pick(['leader', 'follower']);
      const applied = fuzz.int(0, 1_000_000);
      const mac = keys.mac([Buffer.from(`tickd/member/1\0${cluster}\0${node}\0${role}\0${applied}`)])!.toString('hex');
      return JSON.stringify({ role, applied, key: keys.signingId.toString('hex'), mac });
    };
    let what: string;
    let k: string;
    let value: Uint8Array | string;
    switch (fuzz.int(0, 7)) {
      case 0: [what, k, value] = ['nodes: random bytes', key(), fuzz.bytes(fuzz.int(0, 2000))]; break;
      case 1: [what, k, value] = ['nodes: a report without a seal', key(), JSON.stringify({ role: 'follower', applied: fuzz.int(0, 10) })]; break;
      case 2: k = key(); [what, value] = ['nodes: a report sealed with another secret', report(k, otherKeys, NAME)]; break;
      case 3: k = key(); [what, value] = ['nodes: another cluster\'s report', report(k, testKeys, OTHER_CLUSTER)]; break;
      case 4: [what, k, value] = ['nodes: odd JSON', key(), fuzz.pick(['null', '[]', '{"role":"leader","applied":-1}', '{"role":"leader","applied":1e300,"key":"","mac":""}', '"x"', '{'])]; break;
      default:
        if (r !== null) {
          const kind = fuzz.int(0, 2);
          [what, k, value] = kind === 0 ? ['nodes: a real report replayed (stale)', r.key, r.data]
            : kind === 1 ? ['nodes: a real report under another name', key(), r.data]
              : ['nodes: a real report truncated or flipped', key(), fuzz.chance(0.5) ? fuzz.truncated(r.data) : fuzz.flipped(r.data)];
        } else {
          [what, k, value] = ['nodes: random bytes', key(), fuzz.bytes(fuzz.int(0, 200))];
        }
    }
    this.launch(what, async () => { await this.nodesKv.put(k, value); });
  }

  /** A foreign value of the lease key (`leader`), or one under another key of the bucket. */
  private lease(leader: boolean): void {
    if (!leader) {
      this.launch('lease: junk under another key', async () => { await this.leaseKv.put(fuzz.token(12), fuzz.bytes(fuzz.int(0, 500))); });
      return;
    }
    const kind = fuzz.int(0, 2);
    const value = kind === 0 && this.real.lease !== null ? this.real.lease
      : kind === 1 ? JSON.stringify({ node: 'evil', holder: 'evil/1/0', acquiredAt: new Date().toISOString(), token: fuzz.token() })
        : fuzz.bytes(fuzz.int(0, 1000));
    const what = kind === 0 && this.real.lease !== null ? 'lease: the holder\'s value replayed' : kind === 1 ? 'lease: a foreign holder' : 'lease: random bytes';
    this.launch(what, async () => { await this.leaseKv.put('leader', value); });
  }
}

/** The commands of a forwarded request's body (sealed or not), or null. */
function commandsOf(body: Buffer): Command[] | null {
  for (const at of body[0] === 0xf2 ? [REQUEST_HEAD, 0] : [0]) {
    try {
      const v = deserialize(body.subarray(at)) as unknown;
      if (Array.isArray(v)) return v as Command[];
    } catch { /* not at this offset */ }
  }
  return null;
}

/** What a forger answers for a command: success, and for a GET a job that does not exist. */
function forgedReply(c: Command): Reply {
  switch (c.op) {
    case 'job.get': return { ok: true, kind: 'job', job: { id: c.id, execution: 7n, status: 'planned' } };
    case 'job.list': return { ok: true, kind: 'jobs', jobs: [{ id: 'evil.forged', execution: 7n, status: 'planned' }], next: null };
    default: return { ok: true, kind: 'done' };
  }
}

/** The job identifier of a stream subject of jobs, or null. */
function idOf(subject: string): string | null {
  const prefix = `${NAME}.j.`;
  if (!subject.startsWith(prefix) || subject.slice(prefix.length).includes('.')) return null;
  return decodeToken(subject.slice(prefix.length));
}

const alive = (d: Daemon): boolean => d.proc.exitCode === null && d.proc.signalCode === null;
/** The checkpoint sequences this node's replays started from (0: the whole stream was read). */
const replayedFrom = (d: Daemon): number[] => d.stderr.filter((l) => l.includes('"msg":"stream replayed"')).map((l) => Number(JSON.parse(l)['checkpointSeq']));
const quarantinedLines = (d: Daemon): string[] => d.stderr.filter((l) => l.includes('"msg":"stream message quarantined: not a record of this cluster"'));
/** What a crash, or a part of a node dying, leaves in its log: a line that is no log record (a stack), a fatal or one of these. */
const CRASHES = ['the cluster role loop failed', 'worker died; replacing it', 'the compaction child exited', 'a command or tick failed', 'runner process died'];
const crashLines = (d: Daemon): string[] => d.stderr.filter((l) => {
  if (!l.startsWith('{')) return l.trim() !== '';
  return l.includes('"level":60') || CRASHES.some((c) => l.includes(`"msg":"${c}`));
});

describe('cluster mode: a fuzzer without the secret on every subject tickd uses', function () {
  this.timeout(240_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  const nodes: Daemon[] = [];
  /** Every node started, in order (three a start), for their logs. */
  const started: Daemon[] = [];
  const clients: LineClient[] = [];
  before(function () { bin = requireNatsServer(this); });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      // Kept (outside the test's temporary directories, which go at exit) for whoever reads the failure.
      for (const [i, d] of started.entries()) {
        const file = join(tmpdir(), `tickd-fuzz-${SEED}-${Math.floor(i / NODES.length) + 1}-${NODES[i % NODES.length]}.log`);
        writeFileSync(file, `${d.stderr.join('\n')}\n`);
        console.log(`      ${NODES[i % NODES.length]}, start ${Math.floor(i / NODES.length) + 1} (${alive(d) ? 'alive' : `exited ${d.proc.exitCode ?? d.proc.signalCode}`}): its log is in ${file}`);
      }
    }
    started.splice(0);
    for (const c of clients.splice(0)) c.close();
    for (const d of nodes.splice(0)) await d.kill();
    await closeNatsClients();
    await nats?.stop();
    nats = null;
  });
  const client = async (d: Daemon): Promise<LineClient> => {
    const c = await LineClient.connect(d.tcp);
    clients.push(c);
    return c;
  };
  const startAll = async (): Promise<Daemon[]> => {
    // As startNode does, but each is kept before it is ready: one that never gets there is
    // stopped after the test too.
    const three = NODES.map((name) => Daemon.spawn({
      args: nodeArgs(nats!, { cluster: NAME, name, ttl: TTL, extra: ['--checkpoint-records', '200'] }), dir: tempDir(), config: { http: { listen: '127.0.0.1:0' } },
    }));
    nodes.push(...three);
    started.push(...three);
    await Promise.all(three.map((d) => d.waitForReady(START_MS)));
    return three;
  };
  /** A SET through every node, tried again until acknowledged: the cluster serves. */
  const serves = async (all: readonly Daemon[], tag: string, ms: number): Promise<string[]> => {
    const ids: string[] = [];
    await Promise.all(all.map(async (d) => {
      const name = NODES[all.indexOf(d)]!;
      const c = await client(d);
      const id = `after.${tag}.${name}`;
      ids.push(id);
      await waitFor(async () => (await c.request('s', `SET ${id} ${FAR}`, ms))[0] === 's OK', ms, `a SET through ${name} (${tag}) acknowledged`);
    }));
    return ids;
  };

  it(`survives ${FUZZ_MESSAGES} foreign messages in ${FUZZ_MS / 1000} s while serving, keeps every acknowledged write, and restarts cold`, async () => {
    console.log(`      seed ${SEED} (TICKD_FUZZ_SEED=${SEED} replays the fuzzer's choices)`);
    const began = performance.now();
    nats = await startNats(bin, 3);
    let all = await startAll();
    await waitForLeader(all);
    const setup = await client(all[0]!);
    await waitFor(async () => (await setup.request('r', 'RULE SET f. f. shell true', 30_000))[0] === 'r OK', 30_000, 'the rule f. set');

    const loads = await Promise.all(all.map(async (d) => new Load(await client(d), NODES[all.indexOf(d)]!)));
    const ackedIds = (): string[] => loads.flatMap((l) => l.acked);
    const ackedTime = (id: string): bigint | null => {
      for (const l of loads) {
        const e = l.expect.get(id);
        if (e !== undefined) return e.acked;
      }
      return null;
    };
    const wasAcked = (c: Command): boolean => {
      const text = c.op === 'job.set' ? `SET ${c.id} ${c.execution}` : c.op === 'job.remove' ? `REMOVE ${c.id}` : null;
      return text !== null && loads.some((l) => l.ackedCommands.has(text));
    };
    await waitFor(() => loads.every((l) => l.acked.length >= 20), 30_000, 'writes acknowledged on every node before the fuzzing');
    // A checkpoint first: every rebuild the fuzzing causes reads it, and the fuzzer copies it.
    const checkpoints = (): number => all.reduce((n, d) => n + d.stderr.filter((l) => l.includes('"msg":"checkpoint made"')).length, 0);
    await waitFor(() => checkpoints() > 0, 60_000, 'a checkpoint made before the fuzzing');
    const checkpointsBefore = checkpoints();
    const replaysBefore = all.map((d) => replayedFrom(d).length);
    const marker = join(tempDir(), 'fuzzed-rule-ran');
    const fuzzer = new Fuzzer(nats.urls, marker, ackedIds, ackedTime, wasAcked);
    await fuzzer.open(true);
    await fuzzer.refresh();
    const fuzzStart = performance.now();
    await fuzzer.run(FUZZ_MS, FUZZ_MESSAGES, LEASE_JUNK);
    await fuzzer.close();
    const fuzzMs = performance.now() - fuzzStart;
    console.log(`      fuzzed ${fuzzer.total} messages in ${Math.round(fuzzMs)} ms; ${ackedIds().length} writes acknowledged so far (${loads.map((l) => l.acked.length).join(' + ')}); ${checkpoints() - checkpointsBefore} checkpoints made meanwhile; the nodes' copies rebuilt ${all.reduce((n, d, i) => n + replayedFrom(d).length - replaysBefore[i]!, 0)} times, ${all.reduce((n, d, i) => n + replayedFrom(d).slice(replaysBefore[i]).filter((x) => x > 0).length, 0)} of them from a checkpoint`);
    console.log(`      replies: ${loads.map((l) => JSON.stringify(Object.fromEntries(l.replies))).join(' ')}`);
    console.log(`      sent: ${JSON.stringify(Object.fromEntries([...fuzzer.counts].sort()))}`);

    // No node died, and the cluster serves on every node within RECOVER_MS: without these the
    // rest cannot be looked at, so they fail at once. Every other finding is gathered, and the
    // cold starts are made whatever was found, so that one run says all it can.
    expect(all.filter((d) => !alive(d)).map((d) => `${NODES[all.indexOf(d)]} exited ${d.proc.exitCode ?? d.proc.signalCode}`), 'nodes that exited').to.deep.equal([]);
    const recovering = performance.now();
    await waitForLeader(all, RECOVER_MS);
    const after = await serves(all, 'fuzz', RECOVER_MS);
    const recoverMs = performance.now() - recovering;
    // Every request the clients sent is answered, OK or not (a forwarded one within the
    // forwarding's own bounds, which are well below this).
    const settled = await Promise.race([Promise.all(loads.map((l) => l.stop())).then(() => true), new Promise<false>((r) => { setTimeout(() => r(false), 60_000).unref(); })]);
    expect(settled, 'every client request answered within 60 s of the fuzzing').to.equal(true);
    expect(all.filter((d) => !alive(d)).length, 'nodes that exited').to.equal(0);

    const expected = new Map<string, Expect>();
    for (const l of loads) for (const [id, e] of l.expect) expected.set(id, e);
    for (const id of after) expected.set(id, { acked: FAR, maybe: [], removed: 'no' });
    const sent = new Set([...loads.flatMap((l) => [...l.sent]), ...after]);
    const acked = [...expected].filter(([, e]) => e.acked !== null).length;
    console.log(`      served again on every node ${Math.round(recoverMs)} ms after the fuzzing; ${acked} writes acknowledged in all`);

    const failures: string[] = [];
    const fail = (what: string, xs: readonly string[]): void => {
      if (xs.length === 0) return;
      failures.push(`${what}: ${xs.length}`);
      console.log(`      FAILED ${what}: ${xs.length}\n        ${xs.slice(0, 6).join('\n        ')}`);
    };
    /** The cluster's state, asked through each node: every acknowledged write, nothing else; findings by kind. */
    const verify = async (when: string, live: readonly Daemon[]): Promise<void> => {
      const found = new Map<string, string[]>();
      const note = (kind: string, what: string): void => {
        const xs = found.get(kind) ?? [];
        found.set(kind, xs);
        xs.push(what);
      };
      for (const d of live) {
        const name = NODES[live.indexOf(d)]!;
        const c = await client(d);
        const q = await c.request('q', 'QUERY', 60_000);
        expect(q.at(-1), `QUERY through ${name} ${when}`).to.equal('q OK');
        const state = new Map(q.slice(0, -1).map((l) => {
          const [, id, , time] = l.split(' ');
          return [id!, BigInt(time!)] as const;
        }));
        for (const id of state.keys()) if (!sent.has(id)) note('jobs nobody sent', `${name}: ${id}`);
        for (const [id, e] of expected) {
          const got = state.get(id);
          const times = [...(e.acked === null ? [] : [e.acked]), ...e.maybe];
          const mayBeAbsent = e.acked === null || e.removed !== 'no';
          const onto = fuzzer.overwritten.has(subjects.job(id)) ? ', on whose subject the fuzzer published' : '';
          const copied = fuzzer.rerun.has(id) ? ', named by a copy of a batch the leader ran' : '';
          if (e.removed === 'yes' && got !== undefined) note(`jobs removed (acknowledged), yet there${copied}`, `${name}: ${id} ${got}`);
          else if (got === undefined && !mayBeAbsent) note(`acknowledged jobs lost${onto}`, `${name}: ${id} (acknowledged at ${e.acked})`);
          else if (got !== undefined && !times.includes(got)) note(`jobs holding another time than acknowledged${copied}`, `${name}: ${id} holds ${got}, acknowledged ${e.acked}${e.maybe.length > 0 ? `, maybe ${e.maybe.join(' ')}` : ''}`);
        }
        const rules = await c.request('l', 'LISTRULES', 30_000);
        if (JSON.stringify(rules) !== JSON.stringify(['l f. f. shell true', 'l OK'])) {
          note(`rules other than the one acknowledged (f. f. shell true${fuzzer.overwritten.has(subjects.rule('f.')) ? ', on whose subject the fuzzer published' : ''})`, `${name}: ${JSON.stringify(rules)}`);
        }
        // GET too, of some acknowledged jobs.
        const sample = [...expected].filter(([, e]) => e.acked !== null && e.removed === 'no' && e.maybe.length === 0).filter((_, k) => k % 50 === 0).slice(0, 40);
        for (const [id, e] of sample) {
          const g = (await c.request('g', `GET ${id}`, 30_000))[0]!;
          if (!/^g OK \S+ \d+$/.test(g) || BigInt(g.split(' ')[3]!) !== e.acked) note('GETs of acknowledged jobs answered otherwise', `${name}: GET ${id}: ${g}, acknowledged ${e.acked}`);
        }
      }
      for (const [kind, xs] of found) fail(`${when}, through each node: ${kind}`, xs);
    };
    const healthy = (when: string, live: readonly Daemon[]): void => {
      fail(`nodes that exited ${when}`, live.filter((d) => !alive(d)).map((d) => NODES[live.indexOf(d)]!));
      fail(`nodes that quarantined nothing ${when}`, live.filter((d) => quarantinedLines(d).length === 0).map((d) => NODES[live.indexOf(d)]!));
      fail(`crashes in the logs ${when}`, live.flatMap((d) => crashLines(d).map((l) => `${NODES[live.indexOf(d)]}: ${l.slice(0, 300)}`)));
    };

    await verify('after the fuzzing', all);
    healthy('after the fuzzing', all);
    fail('answers a client took from the fuzzer (forged in the leader\'s name)', loads.flatMap((l) => l.forged));
    fail('client anomalies (a REMOVE of an acknowledged job answered not_found, a reply out of order)', loads.flatMap((l) => l.anomalies).map((a) => {
      const id = /acknowledged (\S+):/.exec(a)?.[1];
      return id !== undefined && fuzzer.overwritten.has(subjects.job(id)) ? `${a} (the fuzzer published onto its subject)` : a;
    }));
    fail('copies of acknowledged batches the leader ran again', fuzzer.copiesRun);
    fail('foreign batches the leader ran', fuzzer.answered);
    if (fuzzer.copiesRunMaybeFirst.length > 0) console.log(`      (copies of batches no client was told had run, run by the leader: ${fuzzer.copiesRunMaybeFirst.length})`);

    // Cold starts, after SIGTERM and after SIGKILL of every node, with more junk published meanwhile.
    for (const how of ['SIGTERM', 'SIGKILL'] as const) {
      if (how === 'SIGTERM') {
        // A checkpoint of this cluster's (its head verifies) for the cold start to read.
        const jsm = await jetstreamManager(await connectNats(nats.urls));
        const { created } = await jsm.streams.info(NAME);
        await waitFor(async () => (await readHead(jsm, cp, created, testKeys).catch(() => null))?.head != null, 30_000, 'a checkpoint to read at the cold start');
      }
      const stops = await Promise.all(all.map((d) => d.stop(how)));
      if (how === 'SIGTERM') fail('nodes that did not exit 0 on SIGTERM', stops.flatMap((x, i) => (x.code === 0 ? [] : [`${NODES[i]}: ${x.code ?? x.signal}`])));
      nodes.splice(0);
      const down = new Fuzzer(nats.urls, marker, ackedIds, ackedTime, wasAcked);
      await down.open(false);
      // Before the first cold start the checkpoint is left whole (its replay reads it among the
      // junk); before the second, its head and chunks are junk too (the whole stream is read).
      await down.down(DOWN_MESSAGES, how === 'SIGTERM');
      await down.close();
      for (const subject of down.overwritten) fuzzer.overwritten.add(subject);
      const restarting = performance.now();
      all = await startAll();
      await waitForLeader(all, RECOVER_MS);
      const more = await serves(all, how, RECOVER_MS);
      for (const id of more) {
        expected.set(id, { acked: FAR, maybe: [], removed: 'no' });
        sent.add(id);
      }
      const from = all.map((d) => replayedFrom(d)[0] ?? -1);
      console.log(`      cold start after ${how} of every node: serving on every node in ${Math.round(performance.now() - restarting)} ms; the replays started from checkpoint ${from.join(', ')}`);
      if (how === 'SIGTERM') fail('cold-start replays that did not read the checkpoint (left whole among the junk)', from.flatMap((x, i) => (x > 0 ? [] : [`${NODES[i]}: ${x}`])));
      await verify(`after a cold start (${how})`, all);
      healthy(`after a cold start (${how})`, all);
    }
    if (existsSync(marker)) fail('the fuzzer\'s shell rule ran', [marker]);
    console.log(`      ${Math.round((performance.now() - began) / 1000)} s in all`);
    expect(failures, `seed ${SEED}`).to.deep.equal([]);
  });
});
