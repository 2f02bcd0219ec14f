// Making a cluster's checkpoint (checkpoint.ts), in the compaction child process
// (cluster/fold-child.ts), never on the primary's event loop: the last checkpoint's frames and
// the stream's messages after it are written to a temporary logfile, folded as a logfile's
// compaction folds (lib/logfile/fold.ts), and the result published in chunks.
//
// It reads with a connection of its own, so the daemon's is never busy with it. Nothing here
// decides what may be deleted: the removals it read (their sequences, all at or below the new
// checkpoint's) go back to the leader, which deletes each once every node has applied it
// (removal-deletions.ts).
import { mkdir, mkdtemp, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterOptions } from '../cli.ts';
import { FRAME_HEADER_BYTES } from '../logfile/codec.ts';
import { foldLogfile } from '../logfile/fold.ts';
import { LOGFILE_MODE, writeFully } from '../logfile/fsutil.ts';
import {
  checkpointNames, CHUNK_BYTES, ensureCheckpointStream, readHead, scanCheckpoint, writeCheckpoint, type CheckpointHead, type CheckpointNames,
} from './checkpoint.ts';
import { ClusterKeys } from './cluster-keys.ts';
import { connectOffline } from './connect.ts';
import { openRecord } from './record-seal.ts';
import { scanStream } from './wire/stream-scan.ts';
import { streamPeers } from './stream.ts';
import { clusterSubjects } from './subjects.ts';

const WRITE_BUFFER = 1 << 20;
/** Payload type bytes of a job removal and a rule removal (codec.ts). */
const REMOVAL_TYPES = new Set([2, 3]);

export interface CheckpointMade {
  /** The stream sequence it holds the state at. */
  readonly seq: number;
  readonly records: number;
  readonly bytes: number;
  /** Stream messages read after the last checkpoint. */
  readonly read: number;
  /** The sequences of the removals among them: the leader may delete these now. */
  readonly removals: number[];
}

/** Appends to a file from synchronous callers: bytes are copied into a buffer, written in order. */
class Appender {
  private buf = Buffer.allocUnsafe(WRITE_BUFFER);
  private used = 0;
  private writing: Promise<void> = Promise.resolve();
  private readonly out: FileHandle;

  constructor(out: FileHandle) {
    this.out = out;
  }

  frameHeader(payloadLength: number): void {
    this.reserve(FRAME_HEADER_BYTES);
    this.buf.writeUInt32BE(payloadLength, this.used);
    this.used += FRAME_HEADER_BYTES;
  }

  bytes(src: Buffer, start = 0, end = src.length): void {
    this.reserve(end - start);
    src.copy(this.buf, this.used, start, end);
    this.used += end - start;
  }

  async end(): Promise<void> {
    this.ship();
    await this.writing;
  }

  private reserve(n: number): void {
    if (this.used + n <= this.buf.length) return;
    this.ship();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  private ship(): void {
    if (this.used === 0) return;
    const full = this.buf.subarray(0, this.used);
    this.writing = this.writing.then(() => writeFully(this.out, full));
    this.buf = Buffer.allocUnsafe(this.buf.length);
    this.used = 0;
  }
}

/** The frames of the file at `path`, cut into chunks of whole frames below `max` bytes where they fit. */
async function* frameChunks(path: string, max: number): AsyncGenerator<Buffer> {
  const input = await open(path, 'r');
  try {
    let buf = Buffer.allocUnsafe(2 * max);
    let have = 0;
    let eof = false;
    for (;;) {
      while (!eof && have < buf.length) {
        const { bytesRead } = await input.read(buf, have, buf.length - have, null);
        if (bytesRead === 0) eof = true;
        have += bytesRead;
      }
      if (have === 0) return;
      let cut = 0;
      while (cut + FRAME_HEADER_BYTES <= have) {
        const size = FRAME_HEADER_BYTES + buf.readUInt32BE(cut);
        if (cut + size > have || (cut > 0 && cut + size > max)) break;
        cut += size;
      }
      if (cut === 0) {
        if (eof) throw new Error(`${path} ends inside a record`);
        const grown = Buffer.allocUnsafe(buf.length * 2); // one frame larger than the buffer
        buf.copy(grown, 0, 0, have);
        buf = grown;
        continue;
      }
      yield Buffer.from(buf.subarray(0, cut));
      buf.copy(buf, 0, cut, have);
      have -= cut;
    }
  } finally {
    await input.close();
  }
}

const TEMP_PREFIX = 'tickd-checkpoint-';

/**
 * Removes what the makers of processes gone left in the temporary directory: a maker killed
 * in its work (its daemon stopped) leaves its files, named after its pid.
 */
async function removeLeftovers(): Promise<void> {
  let names: string[];
  try {
    names = await readdir(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^tickd-checkpoint-(\d+)-/.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => {});
    }
  }
}

interface Folded {
  /** A compacted logfile of the state. */
  readonly path: string;
  readonly records: number;
  readonly read: number;
  readonly removals: number[];
}

interface FoldSource {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly names: CheckpointNames;
  /** The checkpoint to start from; null: the stream from `first` alone. */
  readonly from: CheckpointHead | null;
  readonly stream: string;
  readonly first: number;
  readonly last: number;
  readonly peers: string[];
  readonly keys: ClusterKeys;
  /** Made here, for this fold's files. */
  readonly dir: string;
}

/** The checkpoint's frames then the stream's [first, last] as a logfile in `dir`, folded. */
async function foldHistory(o: FoldSource): Promise<Folded> {
  await mkdir(o.dir);
  const src = join(o.dir, 'history');
  const out = await open(src, 'wx', LOGFILE_MODE);
  const removals: number[] = [];
  let read: number;
  try {
    const appender = new Appender(out);
    if (o.from !== null) await scanCheckpoint(o.nc, o.jsm, o.names, o.from, (payload) => appender.bytes(payload));
    read = await scanStream(o.nc, o.jsm, { stream: o.stream, first: o.first, last: o.last, parts: 1, peers: o.peers }, (f, seq) => {
      // A message that is no record of the cluster's is left out (quarantine.ts: the leader
      // deletes it); one that is sealed but does not decode makes the fold refuse, as before.
      const at = openRecord(o.keys, o.stream, f.subject, seq, f.buf, f.payloadStart, f.end);
      if (typeof at === 'string') return;
      appender.frameHeader(f.end - at);
      appender.bytes(f.buf, at, f.end);
      if (REMOVAL_TYPES.has(f.buf[at]!)) removals.push(seq);
    });
    await appender.end();
  } finally {
    await out.close();
  }
  const path = join(o.dir, 'folded');
  // Decodes every record: a damaged one is refused here. Not synced: the chunks are the copy that counts.
  const fold = await foldLogfile(src, path, { sync: false });
  return { path, records: fold.outputRecords, read, removals };
}

/**
 * A new checkpoint of the cluster's stream up to its last sequence now; null when there is
 * nothing new since the last one, or another maker's checkpoint won meanwhile. `whole`: from
 * the whole stream rather than the last checkpoint and what follows it, so that every removal
 * still in the stream is reported, those a lost leader never deleted too.
 */
export async function makeCheckpoint(opts: ClusterOptions, whole = false): Promise<CheckpointMade | null> {
  const nc = await connectOffline(opts, `${opts.nodeName}/checkpoint`);
  let dir: string | null = null;
  try {
    await removeLeftovers();
    dir = await mkdtemp(join(tmpdir(), `${TEMP_PREFIX}${process.pid}-`));
    const jsm = await jetstreamManager(nc);
    const subjects = clusterSubjects(opts.name);
    const names = checkpointNames(opts.name);
    const info = await jsm.streams.info(subjects.stream);
    const { state, created } = info;
    await ensureCheckpointStream(jsm, names, info.config.num_replicas);
    const { keys } = ClusterKeys.fromFile(opts.secretFile);
    const base = await readHead(jsm, names, created, keys);
    if ((base.head?.seq ?? 0) >= state.last_seq) return null;
    const peers = streamPeers(info);
    const foldFrom = (from: CheckpointHead | null, into: string): Promise<Folded> => foldHistory({
      nc, jsm, names, from, stream: subjects.stream, first: Math.max(state.first_seq, (from?.seq ?? 0) + 1), last: state.last_seq, peers, keys, dir: into,
    });
    let folded: Folded;
    const onLast = join(dir, 'on-last');
    try {
      folded = await foldFrom(whole ? null : base.head, onLast);
    } catch (err) {
      // The last checkpoint unreadable (damaged, or replaced meanwhile): from the whole stream,
      // which is right on its own. Gone for good it would otherwise stop every later one.
      if (whole || base.head === null) throw err;
      await rm(onLast, { recursive: true, force: true });
      folded = await foldFrom(null, join(dir, 'whole'));
    }
    const max = Math.min(CHUNK_BYTES, Math.floor(nc.info!.max_payload / 2));
    const head = await writeCheckpoint(jetstream(nc), jsm, names, keys, { seq: state.last_seq, created }, base, {
      chunks: frameChunks(folded.path, max), records: folded.records,
    });
    return head === null ? null : { seq: head.seq, records: head.records, bytes: head.bytes, read: folded.read, removals: folded.removals };
  } finally {
    if (dir !== null) await rm(dir, { recursive: true, force: true });
    await nc.close();
  }
}
