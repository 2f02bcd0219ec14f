// Reading a cluster's stream from its first message to its last sequence at the start.
//
// The daemon's replay starts from the cluster's checkpoint when there is one (checkpoint.ts):
// its chunks hold the state up to a sequence S, and only the stream's messages after S are
// read one by one.
//
// The daemon's replay (replayStream) needs every record but no order across identifiers: it
// reads through wire/stream-scan.ts (plain pull consumers delivering over a bare connection of the
// replay's own, parsed in place; ranges of sequences that may be read at once), and decodes
// each payload where it lies in the connection's buffer: 0.4-0.5 s of this process's CPU per
// million messages where the client library's parsing and message objects cost 1.7-1.9 s.
// `tickd dump --cluster` (dump-stream.ts) prints in stream order: readStream, an ordered
// consumer (ephemeral, in memory, no acknowledgements) reading in flow-controlled batches.
//
// Where a read stops: at the stream's last sequence as it was when the read started, or
// earlier at a message after which the consumer has nothing pending. The last sequence may
// name a message that is gone: the leader deletes removals (once a checkpoint covers them),
// so a stream whose last write was a removal may end on a deleted sequence that is never
// delivered. For the same reason (messages deleted between the look at the stream and their
// delivery) a read that waits IDLE_MS without a message asks the server whether anything is
// pending at all.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { LogRecord } from '../engine/journal.ts';
import type { ClusterSubjects } from './subjects.ts';
import { checkpointNames, CheckpointIncompleteError, readCheckpoint, readHead } from './checkpoint.ts';
import { scanStream } from './wire/stream-scan.ts';
import { streamPeers } from './stream.ts';
import { errorText } from '../errors.ts';
import { readMessage, readRecord, type StreamTrust } from './quarantine.ts';

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
  /** The checkpoint's sequence it started from (0: none); its records are counted in `records`. */
  readonly checkpointSeq: number;
  /** Why the checkpoint could not be read, and the whole stream was instead; null if it was (or there was none). */
  readonly checkpointError: string | null;
}

/** Replays from a checkpoint that moved under them before the whole stream is read instead. */
const MOVED_TRIES = 3;

/**
 * The daemon's replay: the cluster's checkpoint (checkpoint.ts), if any, then every record of
 * the stream after it, into onRecord, once, in sequence order only among those of the same
 * identifier (of which the stream holds one; see wire/stream-scan.ts); the sequence to write (or
 * follow) after. If a new checkpoint was made while this read (the leader may then have
 * deleted removals after the one read), `restart` empties what onRecord filled and all is
 * read again. If the checkpoint cannot be read (its stream unavailable, a chunk missing or
 * that does not decode) or keeps moving (a leader making them faster than this reads), the
 * whole stream is read instead: read whole, it is right without one (a deleted removal took
 * its identifier's last other record with it, and none is deleted while this node, which
 * said so before reading, has not applied it).
 */
export async function replayStream(
  nc: NatsConnection, jsm: JetStreamManager, subjects: ClusterSubjects, trust: StreamTrust,
  onRecord: (rec: LogRecord, seq: number) => void, restart: () => void = () => {},
): Promise<StreamReplay> {
  let checkpointError: string | null = null;
  for (let tries = 1; ; tries++) {
    try {
      return await replayOnce(nc, jsm, subjects, trust, onRecord, checkpointError);
    } catch (err) {
      if (err instanceof CheckpointUnreadableError) checkpointError = err.message;
      else if (!(err instanceof CheckpointMovedError)) throw err;
      else if (tries >= MOVED_TRIES) checkpointError = `a new checkpoint was made during each of ${tries} replays`;
      restart();
    }
  }
}

/** The checkpoint cannot be read: the whole stream is. */
class CheckpointUnreadableError extends Error {}
/** A new checkpoint was made while one was read: read again. */
class CheckpointMovedError extends Error {}

async function replayOnce(
  nc: NatsConnection, jsm: JetStreamManager, subjects: ClusterSubjects, trust: StreamTrust,
  onRecord: (rec: LogRecord, seq: number) => void, checkpointError: string | null,
): Promise<StreamReplay> {
  const { stream } = subjects;
  const info = await jsm.streams.info(stream);
  const { state } = info;
  const names = checkpointNames(stream); // a cluster's stream is named after it (subjects.ts)
  const base = checkpointError === null
    ? await readHead(jsm, names, info.created, trust.keys).catch((err: unknown) => { throw new CheckpointUnreadableError(errorText(err)); })
    : null;
  // An emptied stream (purged by hand) keeps its creation time: its old checkpoint is not its state.
  const head = base !== null && base.head !== null && base.head.seq <= state.last_seq && state.messages > 0 ? base.head : null;
  // Unanswered: as if moved (read again) rather than trust a read that may have missed a removal.
  const moved = async (): Promise<boolean> => (await readHead(jsm, names, info.created, trust.keys).catch(() => null))?.rev !== base!.rev;
  let records = 0;
  if (head !== null) {
    records += await readCheckpoint(nc, jsm, names, head, (rec) => onRecord(rec, head.seq)).catch(async (err: unknown) => {
      // Incomplete under a new head: replaced meanwhile. Under the same one (chunks lost, a
      // head stored without them), or any other failure: unreadable.
      if (err instanceof CheckpointIncompleteError && (await moved())) throw new CheckpointMovedError(err.message);
      throw new CheckpointUnreadableError(errorText(err));
    });
  }
  const first = Math.max(state.first_seq, (head?.seq ?? 0) + 1);
  const peers = streamPeers(info);
  const parts = Math.max(1, Math.min(REPLAY_PARTS, Math.floor((state.last_seq - first + 1) / MIN_RANGE)));
  if (state.messages > 0) {
    records += await scanStream(nc, jsm, { stream, first, last: state.last_seq, parts, peers }, (f, seq) => {
      const rec = readRecord(trust, stream, f.subject, seq, f.buf, f.payloadStart, f.end);
      if (rec !== null) onRecord(rec, seq);
    });
  }
  if (head !== null && (await moved())) throw new CheckpointMovedError('a checkpoint was made during the replay');
  return { records, lastSeq: state.last_seq, checkpointSeq: head?.seq ?? 0, checkpointError };
}

/** How readStream makes a message a record (null: none, passed over). */
export type MessageDecoder = (subject: string, seq: number, data: Uint8Array) => LogRecord | null;

/** The records a StreamTrust takes (quarantine.ts readMessage). */
export function trusted(trust: StreamTrust, stream: string): MessageDecoder {
  return (subject, seq, data) => readMessage(trust, stream, subject, seq, data);
}

/**
 * Reads the stream in order from its first message to its last at the start, decoding each
 * message with `decode` (trusted(): a sealed record of the cluster's); `between` runs after
 * every BATCH messages (and at the end). Returns how many messages were read. A missing
 * stream throws (isStreamNotFound).
 */
export async function readStream(
  js: JetStreamClient, jsm: JetStreamManager, stream: string, decode: MessageDecoder, visit: (rec: LogRecord, seq: number) => void, between: () => Promise<void>,
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
      const rec = decode(m.subject, m.seq, m.data);
      if (rec !== null) visit(rec, m.seq);
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

