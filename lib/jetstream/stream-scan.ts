// The daemon's fast read of its whole stream (replay.ts replayStream): pull consumers read
// into plain core NATS subscriptions, several at once over disjoint sequence ranges; in
// sequence order within a range, in no particular order across ranges.
//
// Why not the client's consumers: at a million small messages, the JS client's per-message
// work (async iterators, delivery info objects, its own bookkeeping) costs as much again as
// the protocol parsing. Here a message costs the parse, a walk over its reply subject and the
// visit. No acknowledgements (ack_policy none).
//
// Why pull requests and not a push consumer with flow control: the server lets a flow-
// controlled consumer run up to 32 MiB of payloads ahead, which at this message size is more
// than its 64 MiB limit of wire bytes for a client: it cut the connection as a slow consumer,
// and messages were lost on the reconnect. Pull requests bound what is in flight (WINDOW_BYTES,
// by the sizes seen so far). A lost delivery is detected anyway (a gap in the consumer's
// delivery sequence) and fails the read.
//
// Why ranges may be read in any order: the stream keeps one message per subject and the read
// covers [first, last] as they were at the start, so no two messages read share a subject; a
// message can vanish meanwhile (a later write to its subject, beyond `last`, or a purge) but
// none can appear inside the range. Records of different identifiers commute.
//
// Why consumers are moved to the server this connection talks to: a consumer elsewhere sends
// every message over a route first (1M messages, 3 servers on 2 cores: 5.3-7 s against 3.2 s).
// The server puts an R1 consumer on a random peer of the stream, so one put elsewhere is
// deleted and created again, a few times at most.
//
// Where a range ends: at its last sequence, at a delivery beyond it, or at a message after
// which nothing is pending. Messages purged after they were counted as pending are never
// delivered: a range quiet for IDLE_MS asks the server whether anything is pending at all.
import { createInbox, nuid, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type ConsumerConfig, type JetStreamManager } from '@nats-io/jetstream';

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

/** One stream message: its payload, its stream sequence, the message (for its subject). */
export type ScanVisit = (data: Buffer, seq: number, msg: Msg) => void;

export interface ScanOptions {
  readonly stream: string;
  readonly first: number;
  readonly last: number;
  /** Ranges read at once, each by its own consumer (at most one per sequence). */
  readonly parts: number;
  /** The servers holding the stream (its leader and replicas): where a consumer can be put. */
  readonly peers: readonly string[];
}

/** Visits once every message of [first, last] still there when its turn comes; returns how many. */
export async function scanStream(nc: NatsConnection, jsm: JetStreamManager, o: ScanOptions, visit: ScanVisit): Promise<number> {
  if (o.last < o.first) return 0;
  const span = o.last - o.first + 1;
  const parts = Math.max(1, Math.min(o.parts, span));
  const readers: RangeReader[] = [];
  for (let i = 0; i < parts; i++) {
    const from = o.first + Math.floor((span * i) / parts);
    const to = o.first + Math.floor((span * (i + 1)) / parts) - 1;
    readers.push(new RangeReader(nc, jsm, o, from, to, visit));
  }
  try {
    await Promise.all(readers.map((r) => r.create()));
    const counts = await Promise.all(readers.map((r) => r.read()));
    return counts.reduce((a, b) => a + b, 0);
  } finally {
    await Promise.all(readers.map((r) => r.close()));
  }
}

/** Where readNumber stopped: just past the `.` after the number. */
let cursor = 0;

/** The decimal number at `cursor` in `s` (NaN if none); moves `cursor` past its `.`. */
function readNumber(s: string): number {
  let i = cursor;
  let n = 0;
  for (let c = s.charCodeAt(i); c >= 48 && c <= 57; c = s.charCodeAt(++i)) n = n * 10 + c - 48;
  const read = i > cursor ? n : NaN;
  cursor = i + 1;
  return read;
}

class RangeReader {
  private readonly nc: NatsConnection;
  private readonly jsm: JetStreamManager;
  private readonly o: ScanOptions;
  private readonly from: number;
  private readonly to: number;
  private readonly visit: ScanVisit;
  private consumer = '';
  private sub: Subscription | null = null;
  private records = 0;
  /** The consumer's delivery sequence of the last message received. */
  private delivered = 0;
  /** Messages asked for by pull requests that neither arrived nor expired. */
  private requested = 0;
  /** Wire bytes (about) of the messages received, to size the requests. */
  private bytes = 0;
  private stop: ((err: unknown) => void) | null = null;

  constructor(nc: NatsConnection, jsm: JetStreamManager, o: ScanOptions, from: number, to: number, visit: ScanVisit) {
    this.nc = nc;
    this.jsm = jsm;
    this.o = o;
    this.from = from;
    this.to = to;
    this.visit = visit;
  }

  async create(): Promise<void> {
    const here = this.nc.info?.server_name;
    const movable = here !== undefined && this.o.peers.includes(here);
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

  read(): Promise<number> {
    const { stream } = this.o;
    const marker = `.${stream}.${this.consumer}.`;
    const opts = this.jsm.getOptions();
    const next = `${opts.apiPrefix}.CONSUMER.MSG.NEXT.${stream}.${this.consumer}`;
    const inbox = createInbox(opts.watcherPrefix);
    return new Promise<number>((resolve, reject) => {
      let idle: NodeJS.Timeout | undefined;
      const pull = (): void => {
        const perMessage = this.delivered === 0 ? 1_024 : this.bytes / this.delivered;
        const batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(WINDOW_BYTES / 2 / perMessage)));
        while (this.requested - this.delivered < 2 * batch) {
          this.nc.publish(next, JSON.stringify({ batch, expires: REQUEST_EXPIRES_MS * NANOS_PER_MS }), { reply: inbox });
          this.requested += batch;
        }
      };
      const finish = (err: unknown): void => {
        if (this.stop === null) return;
        this.stop = null;
        clearInterval(idle);
        this.unsubscribe();
        if (err === null) resolve(this.records); else reject(err);
      };
      const onMessage = (m: Msg): void => {
        const data = m.data;
        // A record is never empty: an empty message with a status is about a pull request.
        if (data.length === 0 && (m.headers?.code ?? 0) !== 0) { this.status(m); pull(); return; }
        const reply = m.reply ?? '';
        const at = reply.indexOf(marker);
        // $JS.ACK[.<domain>.<account>].<stream>.<consumer>.<delivered>.<seq>.<delivery>.<time>.<pending>[.<token>]
        cursor = at + marker.length;
        const deliveries = readNumber(reply);
        const seq = readNumber(reply);
        const delivery = readNumber(reply);
        cursor = reply.indexOf('.', cursor) + 1;
        const pending = readNumber(reply);
        if (at < 0 || deliveries !== 1 || Number.isNaN(seq) || Number.isNaN(pending)) {
          throw new Error(`stream ${stream}: a delivery without the expected JetStream metadata (${reply})`);
        }
        // A delivery missing (the connection lost and found again, say) is a record missing.
        if (delivery !== this.delivered + 1) {
          throw new Error(`stream ${stream}: consumer ${this.consumer} delivered ${delivery} after ${this.delivered}: messages were lost on the way`);
        }
        this.delivered = delivery;
        // The subject is about as long as the payload (one token per identifier).
        this.bytes += 2 * data.length + reply.length + 100;
        if (seq > this.to) { finish(null); return; }
        this.visit(data instanceof Buffer ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength), seq, m);
        this.records++;
        if (seq >= this.to || pending === 0) finish(null);
        else pull();
      };
      this.stop = finish;
      this.sub = this.nc.subscribe(inbox, {
        callback: (err, m) => {
          if (this.stop === null) return;
          try {
            if (err !== null) throw err;
            onMessage(m);
          } catch (e) {
            finish(e);
          }
        },
      });
      pull();
      let checking = false;
      let seen = { delivered: 0, at: Date.now() };
      idle = setInterval(() => {
        const now = Date.now();
        if (this.delivered !== seen.delivered) seen = { delivered: this.delivered, at: now };
        if (checking || now - seen.at < IDLE_MS) return;
        checking = true;
        this.jsm.consumers.info(stream, this.consumer).then((ci) => {
          // Nothing pending on the server and nothing delivered that has not arrived: the rest
          // of the range was deleted meanwhile.
          if (ci.num_pending === 0 && ci.delivered.consumer_seq <= this.delivered) finish(null);
          else if (Date.now() - seen.at > STALL_MS) {
            finish(new Error(`stream ${stream}: consumer ${this.consumer} delivers nothing with ${ci.num_pending} messages pending`));
          }
        }, finish).finally(() => { checking = false; });
      }, IDLE_MS / 4);
    });
  }

  private status(m: Msg): void {
    const h = m.headers!;
    if (h.code === 408) {
      // A request that expired: what it did not deliver is no longer on its way.
      const left = Number(h.get('Nats-Pending-Messages'));
      this.requested = h.has('Nats-Pending-Messages') && Number.isFinite(left) ? this.requested - left : this.delivered;
      return;
    }
    // 100 (a heartbeat) and 404 (nothing now) say nothing; anything else (409: the consumer
    // deleted, too many requests waiting) ends the read.
    if (h.code === 100 || h.code === 404) return;
    throw new Error(`stream ${this.o.stream}: consumer ${this.consumer}: ${h.code} ${h.description}`);
  }

  private unsubscribe(): void {
    this.sub?.unsubscribe();
    this.sub = null;
  }

  /** Ends a read still running (another range failed) and deletes the consumer. */
  async close(): Promise<void> {
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
