// The daemon's fast read of its whole stream (replay.ts replayStream): pull consumers read
// over a bare connection of this read's own (connection.ts), several at once over disjoint sequence
// ranges; in sequence order within a range, in no particular order across ranges.
//
// Why not the client's consumers, nor even its core subscriptions: at a million small
// messages, the JS client's per-message work (async iterators, delivery info objects, its own
// bookkeeping) costs as much again as the protocol parsing, and that parsing with its message
// objects still cost 1.7-1.9 s. Here a message costs the parse of its frame in place
// (parser.ts), a walk over its reply subject's bytes and the visit. No acknowledgements
// (ack_policy none). The consumers themselves are made, asked about and deleted through the
// daemon's connection (jsm); the bare one only carries pull requests and deliveries.
//
// Why pull requests and not a push consumer with flow control: the server lets a flow-
// controlled consumer run up to 32 MiB of payloads ahead, which at this message size is more
// than its 64 MiB limit of wire bytes for a client: it cut the connection as a slow consumer,
// and messages were lost on the reconnect. Pull requests bound what is in flight (WINDOW_BYTES,
// by the sizes seen so far). A lost delivery is detected anyway (a gap in the consumer's
// delivery sequence) and fails the read, as does a lost connection.
//
// Why ranges may be read in any order: the stream keeps one message per subject and the read
// covers [first, last] as they were at the start, so no two messages read share a subject; a
// message can vanish meanwhile (a later write to its subject, beyond `last`, or a deletion) but
// none can appear inside the range. Records of different identifiers commute.
//
// Why consumers are moved to the server the bare connection talks to: a consumer elsewhere
// sends every message over a route first (1M messages, 3 servers on 2 cores: 5.3-7 s against
// 3.2 s). The server puts an R1 consumer on a random peer of the stream, so one put elsewhere
// is deleted and created again, a few times at most.
//
// Where a range ends: at its last sequence, at a delivery beyond it, or at a message after
// which nothing is pending. Messages deleted after they were counted as pending are never
// delivered: a range quiet for IDLE_MS asks the server whether anything is pending at all.
// "Nothing pending" is the word of the consumer's server, which reads its own copy of the
// stream: a server that came back and is still catching up said it after the messages it had,
// and a replay ended without the writes acknowledged while it was down (the cluster-log test's
// NATS SIGKILL, 2 runs of its file in 15). So a range that ends early asks the stream's leader
// ($JS.API.STREAM.MSG.GET, next message from a sequence) whether a message is left in it;
// if one is, the range goes on from there with a consumer on the leader.
import { createInbox, nuid, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type ConsumerConfig, type JetStreamManager } from '@nats-io/jetstream';
import { nextSeqOnLeader } from '../stream.ts';
import { Wire, wireOptionsOf } from './connection.ts';
import type { WireFrame } from './parser.ts';

const IDLE_MS = 1_000;
/** A range with messages pending that receives nothing for this long fails the read. */
const STALL_MS = 15_000;
const PLACEMENT_TRIES = 10;
/** Wire bytes asked for and not yet received, per range: well inside the server's 64 MiB. */
const WINDOW_BYTES = 8 << 20;
const MAX_BATCH = 10_000;
/** A pull request left behind (the read failed before deleting its consumer) ends by then. */
const REQUEST_EXPIRES_MS = 30_000;
const NANOS_PER_MS = 1_000_000;
const WIRE_TIMEOUT_MS = 10_000;
/** Consumers a range may end early on while the leader still holds messages in it. */
const BEHIND_TRIES = 5;

/** One stream message (its payload is f.buf[f.payloadStart, f.end), valid during the call) and its sequence. */
export type ScanVisit = (f: WireFrame, seq: number) => void;

export interface ScanOptions {
  readonly stream: string;
  readonly first: number;
  readonly last: number;
  /** Ranges read at once, each by its own consumer (at most one per sequence). */
  readonly parts: number;
  /** The servers holding the stream, its leader first (streamPeers): where a consumer can be put. */
  readonly peers: readonly string[];
}

/**
 * Visits once every message of [first, last] still there when its turn comes; returns how
 * many. `nc` must come from connectCluster (connect.ts): the bare connection is made as it was.
 */
export async function scanStream(nc: NatsConnection, jsm: JetStreamManager, o: ScanOptions, visit: ScanVisit): Promise<number> {
  if (o.last < o.first) return 0;
  const options = wireOptionsOf(nc);
  if (options === undefined) throw new Error('scanStream needs a connection made by connectCluster');
  const wire = await Wire.open(options, nc.getServer(), WIRE_TIMEOUT_MS);
  const span = o.last - o.first + 1;
  const parts = Math.max(1, Math.min(o.parts, span));
  const readers: RangeReader[] = [];
  for (let i = 0; i < parts; i++) {
    const from = o.first + Math.floor((span * i) / parts);
    const to = o.first + Math.floor((span * (i + 1)) / parts) - 1;
    readers.push(new RangeReader(wire, jsm, o, from, to, visit));
  }
  let lost: Error | null = null;
  wire.onError = (err) => {
    lost = new Error(`stream ${o.stream}: the replay's connection to ${wire.serverName}: ${err.message}`);
    for (const r of readers) r.fail(lost);
  };
  try {
    await Promise.all(readers.map((r) => r.create()));
    // Lost while the consumers were made: no read could end but by its stall timeout.
    if (lost !== null) throw lost;
    const counts = await Promise.all(readers.map((r) => r.readAll()));
    return counts.reduce((a, b) => a + b, 0);
  } finally {
    await Promise.all(readers.map((r) => r.close()));
    wire.close();
  }
}

/**
 * One consumer's deliveries, checked as they come: the numbers in each reply subject
 * ($JS.ACK[.<domain>.<account>].<stream>.<consumer>.<delivered>.<seq>.<delivery>.<time>.<pending>[.<token>]),
 * first deliveries only, and its delivery sequence without a gap: a delivery missing (the
 * connection lost and found again, say) is a record missing.
 */
export class DeliveryLedger {
  /** The consumer's delivery sequence of the last message taken. */
  delivered = 0;
  /** The stream sequence of the last message taken, and how many the consumer had after it. */
  seq = 0;
  pending = 0;
  /** Wire bytes (about) of the messages taken, to size the requests. */
  bytes = 0;
  private readonly stream: string;
  private readonly consumer: string;
  private readonly marker: Buffer;
  private markerOffset = -1;
  /** Where num() stopped: just past the `.` after the number. */
  private after = 0;

  constructor(stream: string, consumer: string) {
    this.stream = stream;
    this.consumer = consumer;
    this.marker = Buffer.from(`.${stream}.${consumer}.`, 'latin1');
  }

  /** The decimal number at b[i] (NaN if none); sets `after` past the `.` that follows it. */
  private num(b: Buffer, i: number): number {
    const from = i;
    let n = 0;
    for (let c = b[i]!; c >= 48 && c <= 57; c = b[++i]!) n = n * 10 + c - 48;
    this.after = i + 1;
    return i > from ? n : NaN;
  }

  take(f: WireFrame): void {
    const b = f.buf;
    const at = this.markerIn(f);
    let deliveries = NaN;
    let seq = NaN;
    let delivery = NaN;
    let pending = NaN;
    if (at >= 0) {
      deliveries = this.num(b, at + this.marker.length);
      seq = this.num(b, this.after);
      delivery = this.num(b, this.after);
      let i = this.after;
      while (i < f.replyEnd && b[i] !== 46 /* . */) i++; // the timestamp
      pending = this.num(b, i + 1);
    }
    if (deliveries !== 1 || Number.isNaN(seq) || Number.isNaN(delivery) || Number.isNaN(pending) || this.after - 1 > f.replyEnd) {
      throw new Error(`stream ${this.stream}: a delivery without the expected JetStream metadata (${f.reply})`);
    }
    if (delivery !== this.delivered + 1) {
      throw new Error(`stream ${this.stream}: consumer ${this.consumer} delivered ${delivery} after ${this.delivered}: messages were lost on the way`);
    }
    this.delivered = delivery;
    this.seq = seq;
    this.pending = pending;
    this.bytes += f.end - f.subjectStart + 40;
  }

  /** Where the reply subject has `.<stream>.<consumer>.` (-1: nowhere): where it was last time, else searched. */
  private markerIn(f: WireFrame): number {
    if (f.replyStart < 0) return -1;
    const b = f.buf;
    const m = this.marker;
    const at = f.replyStart + this.markerOffset;
    let same = this.markerOffset >= 0 && at + m.length <= f.replyEnd;
    for (let i = 0; same && i < m.length; i++) same = b[at + i] === m[i];
    if (same) return at;
    const found = b.indexOf(m, f.replyStart);
    if (found < 0 || found + m.length > f.replyEnd) return -1;
    this.markerOffset = found - f.replyStart;
    return found;
  }
}

class RangeReader {
  private readonly wire: Wire;
  private readonly jsm: JetStreamManager;
  private readonly o: ScanOptions;
  private from: number;
  private readonly to: number;
  private readonly visit: ScanVisit;
  private consumer = '';
  private ledger: DeliveryLedger | null = null;
  private sid = 0;
  private records = 0;
  /** Messages asked for by pull requests that neither arrived nor expired. */
  private requested = 0;
  private stop: ((err: unknown) => void) | null = null;
  private closed = false;

  constructor(wire: Wire, jsm: JetStreamManager, o: ScanOptions, from: number, to: number, visit: ScanVisit) {
    this.wire = wire;
    this.jsm = jsm;
    this.o = o;
    this.from = from;
    this.to = to;
    this.visit = visit;
  }

  /** `onLeader`: put the consumer on the stream's leader, not on the connection's server. */
  async create(onLeader = false): Promise<void> {
    const here = onLeader ? (this.o.peers[0] ?? '') : this.wire.serverName;
    const movable = here !== '' && this.o.peers.includes(here);
    const config: Partial<ConsumerConfig> = {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.from,
      mem_storage: true,
      num_replicas: 1,
      // Gone on its own if this process never deletes it (a crash, a lost connection).
      inactive_threshold: 10 * IDLE_MS * NANOS_PER_MS,
    };
    for (let tries = 1; ; tries++) {
      // Named as the client names its ordered consumers: the same API subjects (and rights).
      const ci = await this.jsm.consumers.add(this.o.stream, { ...config, name: `replay_${nuid.next()}` });
      this.consumer = ci.name;
      if (!movable || ci.cluster?.leader === here || tries >= PLACEMENT_TRIES) return;
      await this.deleteConsumer();
    }
  }

  /** Ends the read with `err` (the connection failed). */
  fail(err: Error): void {
    this.stop?.(err);
  }

  /**
   * Reads the range to its end. Where a consumer ended it early, the stream's leader is asked
   * for the next message from there: one inside the range means the consumer's server was
   * behind, and a consumer on the leader reads on from it.
   */
  async readAll(): Promise<number> {
    for (let tries = 1; ; tries++) {
      const reached = await this.read();
      // Closed meanwhile (another range failed): no consumer is made after close() deleted this one's.
      if (reached >= this.to || this.closed) return this.records;
      const next = await nextSeqOnLeader(this.jsm, this.o.stream, reached + 1);
      if (next === null || next > this.to || this.closed) return this.records;
      if (tries >= BEHIND_TRIES) {
        throw new Error(`stream ${this.o.stream}: ${tries} consumers ended at sequence ${reached} while the leader holds ${next} (up to ${this.to})`);
      }
      await this.deleteConsumer();
      this.from = next;
      this.requested = 0;
      await this.create(true);
      if (this.closed) {
        await this.deleteConsumer();
        return this.records;
      }
    }
  }

  /** One consumer's read: the last sequence it reached (from - 1 if none; to or more: the whole range). */
  private read(): Promise<number> {
    const { stream } = this.o;
    const ledger = new DeliveryLedger(stream, this.consumer);
    this.ledger = ledger;
    const opts = this.jsm.getOptions();
    const next = `${opts.apiPrefix}.CONSUMER.MSG.NEXT.${stream}.${this.consumer}`;
    const inbox = createInbox(opts.watcherPrefix);
    return new Promise<number>((resolve, reject) => {
      let idle: NodeJS.Timeout | undefined;
      let reached = this.from - 1;
      const pull = (): void => {
        const perMessage = ledger.delivered === 0 ? 1_024 : ledger.bytes / ledger.delivered;
        const batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(WINDOW_BYTES / 2 / perMessage)));
        while (this.requested - ledger.delivered < 2 * batch) {
          this.wire.publish(next, inbox, JSON.stringify({ batch, expires: REQUEST_EXPIRES_MS * NANOS_PER_MS }));
          this.requested += batch;
        }
      };
      const finish = (err: unknown): void => {
        if (this.stop === null) return;
        this.stop = null;
        clearInterval(idle);
        this.unsubscribe();
        if (err === null) resolve(reached); else reject(err);
      };
      const onMessage = (f: WireFrame): void => {
        // A record is never empty: an empty message with a status is about a pull request.
        if (f.payloadLength === 0 && f.status !== 0) { this.status(f); pull(); return; }
        ledger.take(f);
        const seq = ledger.seq;
        if (seq > this.to) { reached = seq; finish(null); return; }
        this.visit(f, seq);
        this.records++;
        reached = seq;
        if (seq >= this.to || ledger.pending === 0) finish(null);
        else pull();
      };
      this.stop = finish;
      this.sid = this.wire.subscribe(inbox, (f) => {
        if (this.stop === null) return;
        try {
          onMessage(f);
        } catch (e) {
          finish(e);
        }
      });
      pull();
      let checking = false;
      let seen = { delivered: 0, at: Date.now() };
      idle = setInterval(() => {
        const now = Date.now();
        if (ledger.delivered !== seen.delivered) seen = { delivered: ledger.delivered, at: now };
        if (checking || now - seen.at < IDLE_MS) return;
        checking = true;
        this.jsm.consumers.info(stream, this.consumer).then((ci) => {
          // Nothing pending on the server and nothing delivered that has not arrived: the rest
          // of the range was deleted meanwhile.
          if (ci.num_pending === 0 && ci.delivered.consumer_seq <= ledger.delivered) finish(null);
          else if (Date.now() - seen.at > STALL_MS) {
            finish(new Error(`stream ${stream}: consumer ${this.consumer} delivers nothing with ${ci.num_pending} messages pending`));
          }
        }, finish).finally(() => { checking = false; });
      }, IDLE_MS / 4);
    });
  }

  private status(f: WireFrame): void {
    const code = f.status;
    if (code === 408) {
      // A request that expired: what it did not deliver is no longer on its way.
      const left = /^Nats-Pending-Messages:\s*(\d+)\s*$/im.exec(f.headers);
      this.requested = left === null ? this.ledger!.delivered : this.requested - Number(left[1]);
      return;
    }
    // 100 (a heartbeat) and 404 (nothing now) say nothing; anything else (409: the consumer
    // deleted, too many requests waiting) ends the read.
    if (code === 100 || code === 404) return;
    const line = f.headers.split('\r\n', 1)[0]!;
    throw new Error(`stream ${this.o.stream}: consumer ${this.consumer}: ${line.slice('NATS/1.0 '.length)}`);
  }

  private unsubscribe(): void {
    if (this.sid !== 0) this.wire.unsubscribe(this.sid);
    this.sid = 0;
  }

  /** Ends a read still running (another range failed) and deletes the consumer. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop?.(null);
    this.unsubscribe();
    if (this.consumer !== '') await this.deleteConsumer();
  }

  private async deleteConsumer(): Promise<void> {
    const name = this.consumer;
    this.consumer = '';
    // Best effort: inactive_threshold removes it anyway once nobody asks.
    await this.jsm.consumers.delete(this.o.stream, name).catch(() => undefined);
  }
}
