// Reading a cluster's stream from its first message: the daemon's start-up replay and
// `tickd dump --cluster` (dump-stream.ts). Every message from the first to the stream's last
// sequence at the start, in order, decoded with the logfile's payload codec; an ordered
// consumer (ephemeral, in memory, no acknowledgements) reads it in flow-controlled batches.
//
// Where the read stops: at the stream's last sequence as it was when the dump started, or
// earlier at a message after which the consumer has nothing pending. The last sequence may
// name a message that is gone: the journal purges a removal once acknowledged, so a stream
// whose last write was a removal ends on a deleted sequence that is never delivered. For the
// same reason (messages purged between the look at the stream and their delivery) a read
// that waits IDLE_MS without a message asks the server whether anything is pending at all.
//
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { decodePayload } from '../logfile/codec.ts';
import type { LogRecord } from '../engine/journal.ts';
import type { ClusterSubjects } from './subjects.ts';

/** `between` runs after each run of this many messages. */
const BATCH = 1_000;
/** Messages the consumer asks the server for at once: fewer round trips on a long replay. */
const PULL = 20_000;
const IDLE_MS = 1_000;

export interface StreamReplay {
  readonly records: number;
  /** The sequence the next write must follow. */
  readonly lastSeq: number;
}

/** The daemon's start-up replay: every record into onRecord; the sequence to write after. */
export async function replayStream(
  js: JetStreamClient, jsm: JetStreamManager, subjects: ClusterSubjects, onRecord: (rec: LogRecord, seq: number) => void,
): Promise<StreamReplay> {
  const { state } = await jsm.streams.info(subjects.stream);
  const records = await readStream(js, jsm, subjects.stream, onRecord, async () => {});
  return { records, lastSeq: state.last_seq };
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
      const data = m.data;
      let rec: LogRecord;
      try {
        rec = decodePayload(Buffer.from(data.buffer, data.byteOffset, data.byteLength), 0);
      } catch (err) {
        throw new StreamDecodeError(stream, m.seq, m.subject, err);
      }
      visit(rec, m.seq);
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

