// Reading a cluster's stream from its first message to its last sequence at the start.
//
// The daemon's replay (replayStream) needs every record but no order across identifiers: it
// reads through stream-scan.ts (plain pull consumers delivering over a bare connection of the
// replay's own, parsed in place; ranges of sequences that may be read at once), and decodes
// each payload where it lies in the connection's buffer: 0.4-0.5 s of this process's CPU per
// million messages where the client library's parsing and message objects cost 1.7-1.9 s.
// `tickd dump --cluster` (dump-stream.ts) prints in stream order: readStream, an ordered
// consumer (ephemeral, in memory, no acknowledgements) reading in flow-controlled batches.
//
// Where a read stops: at the stream's last sequence as it was when the read started, or
// earlier at a message after which the consumer has nothing pending. The last sequence may
// name a message that is gone: the journal deletes a removal once acknowledged, so a stream
// whose last write was a removal ends on a deleted sequence that is never delivered. For the
// same reason (messages deleted between the look at the stream and their delivery) a read
// that waits IDLE_MS without a message asks the server whether anything is pending at all.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { decodePayload } from '../logfile/codec.ts';
import type { LogRecord } from '../engine/journal.ts';
import type { ClusterSubjects } from './subjects.ts';
import { scanStream } from './stream-scan.ts';

/** `between` runs after each run of this many messages. */
const BATCH = 1_000;
/** Messages the consumer asks the server for at once: fewer round trips on a long replay. */
const PULL = 20_000;
const IDLE_MS = 1_000;
/**
 * Ranges the replay reads at once, each of at least MIN_RANGE sequences (a consumer costs a
 * few requests). One: the NATS server's delivery is the larger cost now (1M records, 3
 * servers on 2 shared cores: 2.4-2.8 s of server CPU against 1.3-1.5 s in this process), and
 * a second range, which lets the server deliver from two goroutines, was no faster in 12
 * alternating runs (3.1-8.2 s either way, set by the machine's other load) for about 5% more
 * CPU on both sides. More ranges pay only while this process waits for a server with cores
 * to spare.
 */
const REPLAY_PARTS = 1;
const MIN_RANGE = 50_000;

export interface StreamReplay {
  readonly records: number;
  /** The sequence the next write must follow. */
  readonly lastSeq: number;
}

/**
 * The daemon's replay: every record into onRecord, once, in sequence order only among those
 * of the same identifier (of which the stream holds one; see stream-scan.ts); the sequence
 * to write (or follow) after.
 */
export async function replayStream(
  nc: NatsConnection, jsm: JetStreamManager, subjects: ClusterSubjects, onRecord: (rec: LogRecord, seq: number) => void,
): Promise<StreamReplay> {
  const { stream } = subjects;
  const info = await jsm.streams.info(stream);
  const { state } = info;
  if (state.messages === 0) return { records: 0, lastSeq: state.last_seq };
  const peers = [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)].filter((p) => p !== undefined);
  const parts = Math.max(1, Math.min(REPLAY_PARTS, Math.floor((state.last_seq - state.first_seq + 1) / MIN_RANGE)));
  const records = await scanStream(nc, jsm, { stream, first: state.first_seq, last: state.last_seq, parts, peers }, (f, seq) => {
    let rec: LogRecord;
    try {
      rec = decodePayload(f.buf, f.payloadStart, f.end, -f.payloadStart);
    } catch (err) {
      throw new StreamDecodeError(stream, seq, f.subject, err);
    }
    onRecord(rec, seq);
  });
  return { records, lastSeq: state.last_seq };
}

/** A stream message's body as the record it holds; StreamDecodeError when it holds none. */
export function decodeMessage(stream: string, seq: number, subject: string, data: Uint8Array): LogRecord {
  try {
    return decodePayload(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength), 0);
  } catch (err) {
    throw new StreamDecodeError(stream, seq, subject, err);
  }
}

/** A stream message that is not a tickd record. */
export class StreamDecodeError extends Error {
  override readonly name = 'StreamDecodeError';
  constructor(stream: string, seq: number, subject: string, cause: unknown) {
    super(`stream ${stream}: message ${seq} (${subject}) is not a tickd record: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/**
 * Reads the stream in order from its first message to its last at the start, decoding each
 * message as a logfile payload; `between` runs after every BATCH messages (and at the end).
 * Returns how many records were read. A missing stream throws (isStreamNotFound).
 */
export async function readStream(
  js: JetStreamClient, jsm: JetStreamManager, stream: string, visit: (rec: LogRecord, seq: number) => void, between: () => Promise<void>,
): Promise<number> {
  const { state } = await jsm.streams.info(stream);
  if (state.messages === 0) return 0;
  const consumer = await js.consumers.get(stream);
  const messages = await consumer.consume({ max_messages: PULL });
  let records = 0;
  // The consumer (an ordered one is recreated after a gap) and its delivery count of the last
  // message received.
  let got = { consumer: '', delivered: 0 };
  let lastAt = Date.now();
  let checking = false;
  const idle = setInterval(() => {
    if (checking || Date.now() - lastAt < IDLE_MS) return;
    checking = true;
    // Nothing pending on the server and nothing delivered that has not arrived: the rest was
    // deleted meanwhile (close() still hands out every message already received).
    consumer.info().then(
      (ci) => {
        const received = ci.name === got.consumer ? got.delivered : 0;
        if (ci.num_pending === 0 && ci.delivered.consumer_seq <= received) void messages.close();
      },
      () => { /* not created yet, or recreated: look again at the next tick */ },
    ).finally(() => { checking = false; });
  }, IDLE_MS / 4);
  try {
    for await (const m of messages) {
      lastAt = Date.now();
      got = { consumer: m.info.consumer, delivered: m.info.deliverySequence };
      visit(decodeMessage(stream, m.seq, m.subject, m.data), m.seq);
      records++;
      if (m.seq >= state.last_seq || m.info.pending === 0) break;
      if (records % BATCH === 0) await between();
    }
  } finally {
    clearInterval(idle);
    await messages.close();
  }
  await between();
  return records;
}

