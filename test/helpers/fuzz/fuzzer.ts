// The attacker of the cluster fuzz test (test/integration/cluster-fuzz.test.ts): a NATS client
// of its own, without the cluster's secret, publishing what junk.ts makes onto every subject
// tickd uses, on a schedule (run: while the nodes serve; down: while none runs). It overhears
// the nodes' forwarded batches, to copy them later and to answer them first in the leader's
// name (forged answers), and it tells what the leader answered to each batch it requested.
import { serialize } from 'node:v8';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import type { Command } from '../../../lib/domain/command.ts';
import type { CheckpointHead } from '../../../lib/jetstream/checkpoint.ts';
import { sealAnswer } from '../../../lib/jetstream/forward-seal.ts';
import { forwardingSubject } from '../../../lib/jetstream/forwarding.ts';
import { testKeys } from '../cluster-secret.ts';
import { connectNats } from '../nats.ts';
import type { Rng } from './choices.ts';
import { commandsOf, forgedReply, readAnswer, sealedBatch } from './forward-wire.ts';
import { checkpointJunk, forwardJunk, leaseJunk, memberJunk, placementJunk, streamJunk, type Aim, type Real } from './junk.ts';
import { cp, idOf, NAME, NODES, OTHER_CLUSTER, otherKeys, subjects } from './target.ts';

/**
 * The fuzzer publishes in ticks; the stream's junk only every STREAM_TICK_EVERY ticks, in one
 * burst: each burst fences the leader's next write (it puts back what was pushed out, steps
 * down, rebuilds its copy and leads again), and the ticks between let it write, so that writes
 * are acknowledged all along.
 */
const TICK_MS = 200;
const STREAM_TICK_EVERY = 10;

export interface FuzzerOptions {
  readonly urls: string;
  readonly seed: number;
  readonly rng: Rng;
  /** The forger's choices, apart: its timing leaves the fuzzer's sequence alone. */
  readonly forge: Rng;
  readonly marker: string;
  /** Identifiers of acknowledged jobs, and an identifier's last acknowledged time (null: none). */
  readonly acked: () => string[];
  readonly ackedTime: (id: string) => bigint | null;
  /** Whether a client was told this command ran. */
  readonly wasAcked: (c: Command) => boolean;
}

export class Fuzzer {
  readonly counts = new Map<string, number>();
  /** What the leader answered to the batches the fuzzer requested, by kind. */
  readonly answers = new Map<string, number>();
  /** Stream subjects of live identifiers the fuzzer published onto (their record replaced: max_msgs_per_subject 1). */
  readonly overwritten = new Set<string>();
  /** Copies of nodes' batches that the leader ran (answered, not redirected): those of a batch a client was told had run. */
  readonly copiesRun: string[] = [];
  /** Copies that the leader ran, of batches no client was told had run (they may not have, before). */
  readonly copiesRunMaybeFirst: string[] = [];
  /** Identifiers named by the copies the leader ran. */
  readonly rerun = new Set<string>();
  /** Junk requests (no node's batch) that the leader answered with anything but the empty message. */
  readonly answered: string[] = [];
  /** Jobs whose SET the fuzzer answered in the leader's name (a forged answer; refused by a follower that checks the leader's seal). */
  readonly forgedFor = new Set<string>();
  readonly real: Real = { records: [], heads: [], chunks: [], reports: [], lease: null, requests: [], placement: [] };
  private readonly memberKeys = new Set<string>();
  private lastSeq = 0;
  private forging = false;
  /** The cluster's checkpoint (its head and chunks) is left alone: what is published in its stream goes beside it. */
  private spareCheckpoint = false;
  private readonly inbox: string;
  private nc!: NatsConnection;
  private js!: JetStreamClient;
  private jsm!: JetStreamManager;
  private leaseKv!: KV;
  private nodesKv!: KV;
  private readonly inflight = new Set<Promise<void>>();
  private readonly o: FuzzerOptions;
  private readonly aim: Aim;

  constructor(o: FuzzerOptions) {
    this.o = o;
    this.inbox = `_INBOX_FZ${o.seed}`;
    this.aim = { rng: o.rng, real: this.real, acked: o.acked, marker: o.marker, lastSeq: () => this.lastSeq };
  }

  /** Connects; with `listen`, overhears (and forges answers to) the nodes' forwarded batches. */
  async open(listen: boolean): Promise<void> {
    this.nc = await connectNats(this.o.urls, { inboxPrefix: this.inbox });
    this.js = jetstream(this.nc, { timeout: 5_000 });
    this.jsm = await jetstreamManager(this.nc);
    this.leaseKv = await new Kvm(this.nc).open(`${NAME}-lease`);
    this.nodesKv = await new Kvm(this.nc).open(`${NAME}-nodes`);
    if (listen) this.nc.subscribe(forwardingSubject(NAME), { callback: (err, m) => { if (err === null) this.overheard(m); } });
    // The nodes' placement messages, kept to copy later (lib/placement/wire.ts).
    for (const subject of [`$TICKD.${NAME}.exec.>`, `$TICKD.${NAME}.results`]) {
      this.nc.subscribe(subject, {
        callback: (err, m) => {
          if (err !== null || m.reply?.startsWith(this.inbox) === true) return;
          this.real.placement.push({ subject: m.subject, data: Buffer.from(m.data), at: Date.now() });
          if (this.real.placement.length > 200) this.real.placement.shift();
        },
      });
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.inflight);
    await this.nc.close().catch(() => {});
  }

  private tally(map: Map<string, number>, what: string): void {
    map.set(what, (map.get(what) ?? 0) + 1);
  }

  /** Messages published or requested (the forger's answers apart). */
  get total(): number {
    let n = 0;
    for (const [k, v] of this.counts) if (!k.startsWith('answer ')) n += v;
    return n;
  }

  private launch(what: string, op: () => Promise<void>): void {
    this.tally(this.counts, what);
    const p: Promise<void> = op().catch(() => { /* refused by NATS (no stream yet, a value too large, no responders): it counts as sent */ })
      .finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }

  /** A node's forwarded request, overheard: kept to copy later, and, while forging, answered first in the leader's name. */
  private overheard(m: Msg): void {
    if (m.reply?.startsWith(this.inbox) === true) return; // the fuzzer's own
    const { forge } = this.o;
    const data = Buffer.from(m.data);
    this.real.requests.push({ data, at: Date.now() });
    if (this.real.requests.length > 500) this.real.requests.shift();
    if (!this.forging || m.reply === undefined || !forge.chance(0.3)) return;
    const cmds = commandsOf(data);
    const fake = serialize((cmds ?? [{ op: 'stat' }]).map(forgedReply));
    const nonce = sealedBatch(data)?.nonce ?? forge.bytes(16);
    const kind = forge.pick(['unsealed', 'other secret', 'other cluster', 'random', 'empty'] as const);
    const body = kind === 'unsealed' ? fake
      : kind === 'other secret' ? sealAnswer(otherKeys, NAME, nonce, fake)
        : kind === 'other cluster' ? sealAnswer(testKeys, OTHER_CLUSTER, nonce, fake)
          : kind === 'random' ? forge.bytes(forge.int(1, 2000)) : null;
    this.tally(this.counts, `answer ${kind}`);
    for (const c of cmds ?? []) if (c.op === 'job.set') this.forgedFor.add(c.id);
    try {
      if (body !== null) m.respond(body);
      m.respond(new Uint8Array(0));
    } catch { /* the connection closing */ }
  }

  /** Copies of real messages: a few records of acknowledged jobs, the checkpoint head and chunks, reports, the lease. */
  async refresh(): Promise<void> {
    const { rng } = this.o;
    const ids = this.o.acked();
    for (let i = 0; i < 4 && ids.length > 0; i++) {
      const m = await this.jsm.streams.getMessage(NAME, { last_by_subj: subjects.job(rng.pick(ids)) }).catch(() => null);
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
    if (xs.length > max) xs.splice(this.o.rng.int(0, xs.length - 1), 1);
  }

  /**
   * Publishes `budget` messages over `ms`, in ticks of TICK_MS: the stream's junk in one burst
   * every STREAM_TICK_EVERY ticks, the rest spread over the other ticks; `leaseJunk` foreign
   * values of the lease key on the way.
   */
  async run(ms: number, budget: number, leaseJunk: number): Promise<void> {
    const { rng } = this.o;
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
        else rng.pick([() => this.checkpoint(), () => this.forward(), () => this.forward(), () => this.member(), () => this.placement()])();
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
    for (let i = 0; i < n; i++) this.o.rng.pick([() => this.stream(), () => this.stream(), () => this.checkpoint(), () => this.member(), () => this.forward()])();
    this.lease(true);
    await Promise.all(this.inflight);
  }

  private stream(): void {
    const { subject, body, ...junk } = streamJunk(this.aim);
    let what = junk.what;
    const id = idOf(subject);
    if ((id !== null && this.o.ackedTime(id) !== null) || subject === subjects.rule('f.')) {
      this.overwritten.add(subject);
      what += ' (a live subject)';
    }
    this.launch(what, async () => {
      const ack = await this.js.publish(subject, body);
      this.lastSeq = Math.max(this.lastSeq, ack.seq);
    });
  }

  private checkpoint(): void {
    const { what, subject, body } = checkpointJunk(this.aim, this.spareCheckpoint);
    this.launch(what, async () => { await this.js.publish(subject, body); });
  }

  /**
   * Published, or requested: then the leader's answer tells whether the batch ran. The empty
   * message, or a redirect (sealed over the request's nonce) to a node's batch copied, is not
   * run; anything else is.
   */
  private forward(): void {
    const subject = forwardingSubject(NAME);
    const { what, body, copied } = forwardJunk(this.aim);
    if (this.o.rng.chance(0.3)) {
      this.launch(`${what} (published)`, async () => { this.nc.publish(subject, body); });
      return;
    }
    this.launch(`${what} (requested)`, async () => {
      const reply = await this.nc.request(subject, body, { timeout: 3_000 });
      const answer = readAnswer(Buffer.from(body), reply.data);
      this.tally(this.answers, `${copied ? 'a copy' : 'junk'}: ${answer.kind}`);
      if (answer.kind === 'empty' || (answer.kind === 'redirect' && copied)) return;
      const cmds = commandsOf(Buffer.from(body)) ?? [];
      const text = `${what}: ${cmds.map((c) => `${c.op} ${'id' in c ? c.id : ''}`).join(', ')}${answer.kind === 'ran' ? '' : ` (answered: ${answer.kind === 'redirect' ? `a redirect to ${answer.to}` : 'not sealed over its nonce'})`}`;
      // Junk has no seal that verifies: the leader answers it nothing, not even a redirect.
      if (!copied) {
        this.answered.push(text);
        return;
      }
      for (const c of cmds) if ('id' in c) this.rerun.add(c.id);
      // A copy of a batch a client was told had run: it ran twice.
      if (cmds.some((c) => this.o.wasAcked(c))) this.copiesRun.push(text);
      else this.copiesRunMaybeFirst.push(text);
    });
  }

  /**
   * Published, or requested: the answer must be the empty message (a node acted on nothing),
   * but for a node's results copied: a later leader's nonce book has not seen them, and takes
   * them again, which changes nothing (the same result of the same attempt: applied once, then
   * stale).
   */
  private placement(): void {
    const { what, subject, body, copied } = placementJunk(this.aim);
    const mayTake = copied && subject === `$TICKD.${NAME}.results`;
    if (this.o.rng.chance(0.3)) {
      this.launch(`${what} (published)`, async () => { this.nc.publish(subject, body); });
      return;
    }
    this.launch(`${what} (requested)`, async () => {
      const reply = await this.nc.request(subject, body, { timeout: 3_000 });
      this.tally(this.answers, `placement ${mayTake ? 'results copied' : copied ? 'a copy' : 'junk'}: ${reply.data.length === 0 ? 'empty' : 'answered'}`);
      if (reply.data.length > 0 && !mayTake) this.answered.push(`${what} on ${subject}: answered with ${reply.data.length} bytes`);
    });
  }

  private member(): void {
    const { what, key, value } = memberJunk(this.aim, this.memberKeys);
    this.launch(what, async () => { await this.nodesKv.put(key, value); });
  }

  private lease(leader: boolean): void {
    const { what, key, value } = leaseJunk(this.aim, leader);
    this.launch(what, async () => { await this.leaseKv.put(key, value); });
  }
}
