// A cluster's checkpoint (tickd(8) CLUSTER MODE, Checkpoints): the folded state of its stream
// up to a sequence S, as a compacted logfile's frames, in the stream `<cluster>-checkpoint`.
// A replay reads it, then only the stream's messages after S (replay.ts).
//
// Why: the NATS server spends about 4 µs of CPU delivering each message, whatever it holds,
// so a replay that takes one message per record cannot come near a logfile's on a small
// machine. A checkpoint delivers the bulk of the state in chunks of CHUNK_BYTES.
//
// Layout: the chunks of a checkpoint under `<cp>.c.<id>.<index>`, then its head, a JSON
// object under `<cp>.head`: {seq: S, created: the main stream's creation time, id, seqs: the
// checkpoint stream's sequences of its chunks, first and last of them, chunks, bytes,
// records}. The stream keeps one message per subject, so a new head replaces the old.
//
// Chunks are removed by their sequences, not purged: nats-server 2.9 moves every consumer of
// a stream past a purge's bound (even past the end, for a filtered purge that leaves nothing
// matching), so a reader of the current checkpoint would find it cut short. Only chunks left
// by a maker that failed are purged, rarely.
//
// Invariants:
// - A head is published only if the head it was built on is still the last one (compare and
//   set: Nats-Expected-Last-Subject-Sequence). Of two checkpoint makers, one wins; the other
//   removes its chunks.
// - The stream alone stays complete but for removals (every live identifier's last record is
//   there), so a checkpoint only saves reading: `tickd dump --cluster` ignores it.
// - A removal at a sequence after S stays in the stream (the leader deletes a removal only
//   once a checkpoint covers it: removal-deletions.ts). So checkpoint S, then the stream's
//   messages after S, is the whole state, provided the head did not move while they were read.
// - A checkpoint of another incarnation of the main stream (deleted and made again) does not
//   count: its `created` differs.
import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { nuid, type NatsConnection } from '@nats-io/transport-node';
import type { LogRecord } from '../engine/journal.ts';
import { forEachFrame } from '../logfile/frames.ts';
import { isStreamNotFound } from './api-errors.ts';
import { isWrongLastSequence } from '../lease/errors.ts';
import type { ClusterKeys } from './cluster-keys.ts';
import { scanStream } from './wire/stream-scan.ts';
import { streamPeers } from './stream.ts';

/** Chunks are cut at frame boundaries below this (and below half the server's max_payload). */
export const CHUNK_BYTES = 256 * 1024;
/** Chunks published at once. */
const WINDOW = 8;

export interface CheckpointHead {
  /** HMAC-SHA256 of the rest (headText) under the cluster's key `key` names, hex: a head anyone else published is no head. */
  readonly mac?: string;
  readonly key?: string;
  readonly seq: number;
  readonly created: string;
  readonly id: string;
  readonly seqs: readonly number[];
  readonly first: number;
  readonly last: number;
  readonly chunks: number;
  readonly bytes: number;
  readonly records: number;
}

/**
 * The last head as read: what it says (null when there is none, or it is not of this
 * incarnation of the main stream) and its own sequence, 0 if none (what a new head must follow).
 */
export interface HeadRead {
  readonly head: CheckpointHead | null;
  readonly rev: number;
}

export interface CheckpointNames {
  readonly stream: string;
  readonly head: string;
  chunk(id: string, index: number): string;
  /** Every chunk of one checkpoint. */
  chunks(id: string): string;
  /** Every chunk of every checkpoint. */
  readonly allChunks: string;
}

export function checkpointNames(cluster: string): CheckpointNames {
  const stream = `${cluster}-checkpoint`;
  return {
    stream,
    head: `${stream}.head`,
    chunk: (id, index) => `${stream}.c.${id}.${index}`,
    chunks: (id) => `${stream}.c.${id}.>`,
    allChunks: `${stream}.c.>`,
  };
}

/** A checkpoint read incomplete: replaced while it was read, or damaged. */
export class CheckpointIncompleteError extends Error {
  override readonly name = 'CheckpointIncompleteError';
}

export async function ensureCheckpointStream(jsm: JetStreamManager, names: CheckpointNames, replicas: number): Promise<void> {
  try {
    await jsm.streams.info(names.stream);
    return;
  } catch (err) {
    if (!isStreamNotFound(err)) throw err;
  }
  await jsm.streams.add({ name: names.stream, subjects: [`${names.stream}.>`], max_msgs_per_subject: 1, num_replicas: replicas });
}

const HEAD_CONTEXT = Buffer.from('tickd/checkpoint-head/1\0', 'latin1');

/** What a head's MAC covers: every field but the MAC and the key's id, in one order. */
function headText(h: CheckpointHead): Buffer {
  return Buffer.from(JSON.stringify([h.seq, h.created, h.id, h.seqs, h.first, h.last, h.chunks, h.bytes, h.records]));
}

/** A head with its MAC (a head without one, or with another's, is no head: parseHead). */
export function sealHead(keys: ClusterKeys, h: CheckpointHead): CheckpointHead {
  return { ...h, key: keys.signingId.toString('hex'), mac: keys.mac([HEAD_CONTEXT, headText(h)])!.toString('hex') };
}

/** The head a message holds; null when it holds none, or one that is not sealed by this cluster's key. */
function parseHead(m: StoredMsg, keys: ClusterKeys): CheckpointHead | null {
  try {
    const h = m.json<CheckpointHead>();
    const ints = [h.seq, h.first, h.last, h.chunks, h.bytes, h.records, ...(Array.isArray(h.seqs) ? h.seqs : [-1])];
    if (!ints.every((n) => Number.isSafeInteger(n) && n >= 0) || typeof h.id !== 'string' || typeof h.created !== 'string') return null;
    if (h.seqs.length !== h.chunks || typeof h.mac !== 'string' || typeof h.key !== 'string') return null;
    return keys.verify([HEAD_CONTEXT, headText(h)], Buffer.from(h.key, 'hex'), Buffer.from(h.mac, 'hex')) ? h : null;
  } catch {
    return null;
  }
}

/** The last head, asked of the stream's leader (never a replica, which may lag). */
export async function readHead(jsm: JetStreamManager, names: CheckpointNames, created: string, keys: ClusterKeys): Promise<HeadRead> {
  let m: StoredMsg | null;
  try {
    m = await jsm.streams.getMessage(names.stream, { last_by_subj: names.head });
  } catch (err) {
    if (isStreamNotFound(err)) return { head: null, rev: 0 };
    throw err;
  }
  if (m === null) return { head: null, rev: 0 };
  const head = parseHead(m, keys);
  return { head: head !== null && head.created === created ? head : null, rev: m.seq };
}

/**
 * Every chunk of the checkpoint in order (`payload` valid during the call: whole frames);
 * CheckpointIncompleteError if it is no longer whole.
 */
export async function scanCheckpoint(
  nc: NatsConnection, jsm: JetStreamManager, names: CheckpointNames, head: CheckpointHead, onChunk: (payload: Buffer) => void,
): Promise<void> {
  let chunks = 0;
  let bytes = 0;
  if (head.chunks > 0) {
    const info = await jsm.streams.info(names.stream);
    const peers = streamPeers(info);
    const prefix = names.chunk(head.id, 0).slice(0, -1);
    await scanStream(nc, jsm, { stream: names.stream, first: head.first, last: head.last, parts: 1, peers }, (f, seq) => {
      if (f.subject !== `${prefix}${chunks}`) return; // another maker's chunks, published meanwhile
      // Only at the sequence the sealed head names: a stream's sequences are never reused, so
      // nobody can put other bytes where the head points (one published on the chunk's subject
      // since is skipped, and the checkpoint found incomplete if it replaced the chunk).
      if (seq !== head.seqs[chunks]) return;
      const payload = f.buf.subarray(f.payloadStart, f.end);
      onChunk(payload);
      chunks++;
      bytes += payload.length;
    });
  }
  if (chunks !== head.chunks || bytes !== head.bytes) {
    throw new CheckpointIncompleteError(`checkpoint ${head.id}: read ${chunks} of its ${head.chunks} chunks (${bytes} of ${head.bytes} bytes)`);
  }
}

/** Every record of the checkpoint, in its order; how many. */
export async function readCheckpoint(
  nc: NatsConnection, jsm: JetStreamManager, names: CheckpointNames, head: CheckpointHead, onRecord: (rec: LogRecord) => void,
): Promise<number> {
  let records = 0;
  await scanCheckpoint(nc, jsm, names, head, (payload) => {
    const end = forEachFrame(payload, 0, (rec) => { onRecord(rec); records++; });
    if (end !== payload.length) throw new CheckpointIncompleteError(`checkpoint ${head.id}: a chunk ends inside a record`);
  });
  if (records !== head.records) throw new CheckpointIncompleteError(`checkpoint ${head.id}: ${records} records read, ${head.records} written`);
  return records;
}

export interface CheckpointContent {
  /** Compacted logfile frames, whole, each chunk below the chunk size. */
  readonly chunks: AsyncIterable<Buffer>;
  readonly records: number;
}

/** Deletes messages of the checkpoint stream by sequence; one already gone is no error. */
async function deleteChunks(jsm: JetStreamManager, names: CheckpointNames, seqs: readonly number[]): Promise<void> {
  await Promise.all(seqs.map((seq) => jsm.streams.deleteMessage(names.stream, seq, false).catch(() => {})));
}

/**
 * Publishes a checkpoint of the stream up to `seq` and makes it the head, if `base` (the
 * head it was built on) is still the last one. Returns the new head, or null when another
 * checkpoint won (this one's chunks are then deleted). The replaced checkpoint's chunks are
 * deleted.
 */
export async function writeCheckpoint(
  js: JetStreamClient, jsm: JetStreamManager, names: CheckpointNames, keys: ClusterKeys,
  at: { readonly seq: number; readonly created: string }, base: HeadRead, content: CheckpointContent,
): Promise<CheckpointHead | null> {
  const id = nuid.next();
  const acks: Promise<number>[] = [];
  let bytes = 0;
  let seqs: number[];
  try {
    const window: Promise<number>[] = [];
    for await (const chunk of content.chunks) {
      const ack = js.publish(names.chunk(id, acks.length), chunk).then((a) => a.seq);
      ack.catch(() => {}); // every one is awaited below; none may be an unhandled rejection meanwhile
      acks.push(ack);
      window.push(ack);
      bytes += chunk.length;
      if (window.length >= WINDOW) await window.shift();
    }
    seqs = await Promise.all(acks);
  } catch (err) {
    const stored = (await Promise.allSettled(acks)).flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    await deleteChunks(jsm, names, stored);
    throw err;
  }
  const head = sealHead(keys, {
    seq: at.seq, created: at.created, id, seqs, first: seqs[0] ?? 0, last: seqs.at(-1) ?? 0, chunks: seqs.length, bytes, records: content.records,
  });
  let headSeq: number;
  try {
    headSeq = (await js.publish(names.head, JSON.stringify(head), { expect: { lastSubjectSequence: base.rev } })).seq;
  } catch (err) {
    // Not refused (a timeout, say): the head may be stored all the same, so its chunks stay;
    // if it was not, the next checkpoint's clean-up takes them.
    if (!isWrongLastSequence(err)) throw err;
    await deleteChunks(jsm, names, seqs);
    return null;
  }
  if (base.head !== null) await deleteChunks(jsm, names, base.head.seqs);
  const { state } = await jsm.streams.info(names.stream);
  if (state.messages > head.chunks + 1) {
    // Chunks a failed maker left (or another maker's, being published after this one's:
    // untouched, being later).
    const before = head.chunks > 0 ? head.first : headSeq;
    // nats-server 2.9 takes a bound of 1 for no bound at all: there is nothing before 1.
    if (before > 1) await jsm.streams.purge(names.stream, { filter: names.allChunks, seq: before });
  }
  return head;
}
