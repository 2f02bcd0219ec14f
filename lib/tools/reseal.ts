// `tickd import --reseal BACKUP --cluster ...` (tickd(8) "Sealing an older cluster's stream"):
// the one-time move of a stream written by a tickd that did not seal its records
// (before cluster secrets) to sealed records, with every node stopped. Its records would
// otherwise be quarantined by every node of this version.
//
// In order, so that no step loses what the one before kept:
// 1. The stream is read in order; a message is taken as a record when it is sealed with the
//    cluster's key, or when it is a bare payload an older tickd wrote; anything else is named
//    on stderr and left out. The records are folded to the last state of each job and rule.
// 2. They are written to BACKUP, a logfile (refused if it exists), and fsynced.
// 3. The stream is purged; runImport then imports BACKUP into it, sealed, as any import.
// A failure after step 2 leaves BACKUP whole: `tickd import BACKUP --cluster ...` finishes it.
import { open } from 'node:fs/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterOptions } from '../cli.ts';
import type { LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';
import type { ClusterKeys } from '../jetstream/cluster-keys.ts';
import { readRecord, type Quarantined } from '../jetstream/quarantine.ts';
import { SEALED_RECORD_V1 } from '../jetstream/record-seal.ts';
import { readStream } from '../jetstream/replay.ts';
import { clusterSubjects } from '../jetstream/subjects.ts';
import { decodePayload, encodeRecord } from '../logfile/codec.ts';
import { foldRecord } from '../logfile/frames.ts';
import { LOGFILE_MODE, writeFully } from '../logfile/fsutil.ts';

/** Steps 1 to 3: the records now in BACKUP, the stream emptied for them. */
export async function resealStream(
  nc: NatsConnection, cluster: ClusterOptions, keys: ClusterKeys, backup: string, err: NodeJS.WritableStream,
): Promise<LogRecord[]> {
  const { stream } = clusterSubjects(cluster.name);
  const jsm = await jetstreamManager(nc);
  const latest = new Map<string, LogRecord>();
  let left = 0;
  const leaveOut = (seq: number, subject: string, why: string): null => {
    left++;
    err.write(`tickd import: left out: message ${seq} (${subject}): ${why}\n`);
    return null;
  };
  const trust = { keys, quarantined: (q: Quarantined) => { leaveOut(q.seq, q.subject, q.why); } };
  await readStream(jetstream(nc), jsm, stream, (subject, seq, data) => {
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (buf[0] === SEALED_RECORD_V1) return readRecord(trust, stream, subject, seq, buf, 0, buf.length);
    try {
      return decodePayload(buf, 0);
    } catch (e) {
      return leaveOut(seq, subject, `not a record: ${errorText(e)}`);
    }
  }, (rec) => foldRecord(latest, rec, () => rec), async () => {});
  const records = [...latest.values()];
  const out = await open(backup, 'wx', LOGFILE_MODE);
  try {
    await writeFully(out, Buffer.concat(records.map(encodeRecord)));
    await out.sync();
  } finally {
    await out.close();
  }
  err.write(`tickd import: ${records.length} records of stream ${stream} kept in ${backup}${left > 0 ? ` (${left} messages left out)` : ''}; emptying the stream\n`);
  await jsm.streams.purge(stream);
  return records;
}
