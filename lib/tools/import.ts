// `tickd import LOGFILE --cluster URL[,URL...] [--cluster-name NAME] [--cluster-creds FILE]
// [--cluster-ca FILE] [--cluster-replicas N]` (tickd(8) CLUSTER MODE, Import): moves a
// single-node logfile into a cluster's new (or empty) stream.
//
// Theory, in order:
// 1. The history is read read-only, as startup would replay it: a leftover
//    `<LOGFILE>.to_compress` (an interrupted compaction) first, then LOGFILE. `.compacting` is
//    ignored (startup deletes it; import changes no file). A torn final record (a write never
//    acknowledged) is left out with a note; a record that does not decode, or one of a newer
//    tickd (its own message, naming the format), stops everything before anything is published.
// 2. It is folded to the last state of each job and rule (frames.ts foldRecord, as compaction
//    and `dump --compact` do): in order of last write, removed entries gone. So the stream ends
//    up holding what `tickd dump LOGFILE --compact` prints, in the same order. A format mark
//    is no state and is not imported: a stream's format is its cluster's to record.
// 3. The stream is created if absent (ensureStream: --cluster-replicas, capped at what NATS
//    can hold), and the import is refused if it holds any message. The cluster's checkpoint
//    stream, if any (of what the stream held before it was emptied), is deleted.
// 4. The records go through the leader's own journal (journal.ts StreamJournal): the same
//    subjects and payload bytes, pipelined in windows of WINDOW, every publish expecting the
//    sequence before it, starting at the stream's last sequence (an emptied stream has one),
//    a failed one sent again as the journal does (same message id, within its deadline).
//
// The guard against a running cluster is the empty stream plus the expected sequences: a
// leader that writes during the import makes either the import fail (exit 1, the stream holds
// part of it) or its own write fail (it steps down). Import with the cluster's nodes stopped.
// Exit status: 0 imported, 1 refused or failed (one line on stderr), 2 usage error.
import { randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { CLUSTER_CONNECTION_OPTIONS, parseArgsOrUsage, parseCluster, SECRET_REQUIRED, type ClusterOptions } from '../cli.ts';
import { errorText, StartupError } from '../errors.ts';
import { silentLogger } from '../log.ts';
import type { LogRecord } from '../engine/journal.ts';
import { foldRecord } from '../logfile/frames.ts';
import { exists, isNotFound, toCompressPath } from '../logfile/fsutil.ts';
import { LogfileUnreadableError, scanFile } from '../logfile/replay.ts';
import { isStreamNotFound } from '../jetstream/api-errors.ts';
import { connectOffline, showUrls } from '../jetstream/connect.ts';
import { checkpointNames } from '../jetstream/checkpoint.ts';
import { ClusterKeys } from '../jetstream/cluster-keys.ts';
import { resealStream } from './reseal.ts';
import { StreamJournal } from '../jetstream/journal.ts';
import { ensureStream } from '../jetstream/stream.ts';
import { clusterSubjects } from '../jetstream/subjects.ts';

export const IMPORT_USAGE = 'Usage: tickd import LOGFILE --cluster URL[,URL...] [--cluster-name NAME] [--cluster-creds FILE]\n'
  + '                    [--cluster-ca FILE] [--cluster-replicas N] --cluster-secret-file FILE\n'
  + '       tickd import --reseal BACKUP --cluster URL[,URL...] ... (an older tickd\'s stream, sealed anew)\n';

/** Publishes in flight at once. */
const WINDOW = 1_000;

interface ImportArgs {
  readonly path: string;
  readonly cluster: ClusterOptions;
  /** `path` is the backup the stream's own records go to, then come from (reseal.ts). */
  readonly reseal: boolean;
}

function parseImportArgs(argv: readonly string[]): ImportArgs | string {
  const parsed = parseArgsOrUsage({
    args: argv,
    allowPositionals: true,
    options: {
      ...CLUSTER_CONNECTION_OPTIONS, 'cluster-replicas': { type: 'string' }, reseal: { type: 'boolean' },
    },
  });
  if (typeof parsed === 'string') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) return positionals.length === 0 ? 'missing LOGFILE' : `one LOGFILE expected, got ${positionals.length}`;
  const cluster = parseCluster(values);
  if (typeof cluster === 'string') return cluster;
  if (cluster === null) return 'missing --cluster URL[,URL...]';
  if (cluster.secretFile === null) return SECRET_REQUIRED;
  return { path: positionals[0]!, cluster, reseal: values.reseal === true };
}

class ImportError extends Error {}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/** The last state of each job and rule in the logfile's history; notes a torn tail on `err`. */
async function readHistory(path: string, err: NodeJS.WritableStream): Promise<LogRecord[]> {
  const latest = new Map<string, LogRecord>();
  const visit = (rec: LogRecord) => foldRecord(latest, rec, () => rec);
  const leftover = toCompressPath(path);
  const files = (await exists(leftover)) ? [leftover, path] : [path];
  for (const file of files) {
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (e) {
      // After an interrupted compaction, the log may not exist yet: startup replays it as empty.
      if (file === path && files.length === 2 && isNotFound(e)) break;
      throw new ImportError(`cannot read ${file}: ${(e as Error).message}`);
    }
    try {
      const { size } = await handle.stat();
      const { tornAt } = await scanFile(handle, file, 0, size, visit);
      if (tornAt < size) err.write(`tickd import: ${file}: incomplete final record at byte offset ${tornAt} (${size - tornAt} bytes), not imported\n`);
    } catch (e) {
      throw new ImportError(e instanceof LogfileUnreadableError ? `${e.message}; nothing imported` : `cannot read ${file}: ${(e as Error).message}`);
    } finally {
      await handle.close();
    }
  }
  return [...latest.values()];
}

export async function runImport(argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const args = parseImportArgs(argv);
  if (typeof args === 'string') {
    err.write(`tickd import: ${args}\n${IMPORT_USAGE}`);
    return 2;
  }
  let nc: NatsConnection | null = null;
  try {
    const { keys } = ClusterKeys.fromFile(args.cluster.secretFile);
    if (args.reseal && (await exists(args.path))) throw new ImportError(`${args.path} exists: --reseal writes a new backup there`);
    const history = args.reseal ? null : await readHistory(args.path, err);
    nc = await connectOffline(args.cluster, 'tickd import');
    const records = history ?? (await resealStream(nc, args.cluster, keys, args.path, err));
    const summary = await publishAll(nc, args.cluster, keys, records);
    out.write(`imported ${records.length} records (${count(summary.jobs, 'job')}, ${count(summary.rules, 'rule')}) from ${args.path} into stream ${summary.stream} at ${showUrls(args.cluster.urls)}: last sequence ${summary.lastSeq}, ${count(summary.replicas, 'replica')}\n`);
    return 0;
  } catch (e) {
    const text = errorText(e);
    // Ours and the connection's errors say where already; the client's (no JetStream there...) not.
    err.write(`tickd import: ${e instanceof ImportError || e instanceof StartupError ? text : `NATS at ${showUrls(args.cluster.urls)}: ${text}`}\n`);
    return 1;
  } finally {
    await nc?.close();
  }
}

interface Summary {
  readonly stream: string;
  readonly jobs: number;
  readonly rules: number;
  readonly lastSeq: number;
  readonly replicas: number;
}

async function publishAll(nc: NatsConnection, cluster: ClusterOptions, keys: ClusterKeys, records: readonly LogRecord[]): Promise<Summary> {
  const subjects = clusterSubjects(cluster.name);
  const where = `stream ${subjects.stream} at ${showUrls(cluster.urls)}`;
  const jsm = await jetstreamManager(nc);
  const { state } = await ensureStream(jsm, subjects, cluster.replicas, silentLogger());
  if (state.messages > 0) {
    throw new ImportError(`${where} is not empty (${state.messages} messages, last sequence ${state.last_seq}): nothing imported; `
      + 'import only into a new or empty stream, with the cluster\'s nodes stopped');
  }
  // A checkpoint of what an emptied stream held (its creation time kept) is not its state.
  await jsm.streams.delete(checkpointNames(cluster.name).stream).catch((e: unknown) => { if (!isStreamNotFound(e)) throw e; });
  const journal = new StreamJournal({
    js: jetstream(nc), jsm, subjects, lastSeq: state.last_seq, writerId: `import/${hostname()}/${process.pid}/${randomUUID()}`,
    log: silentLogger(), onFenced: () => {}, keys,
  });
  let done = 0;
  try {
    for (let at = 0; at < records.length; at += WINDOW) {
      const window = records.slice(at, at + WINDOW);
      for (const rec of window) journal.append(rec);
      await journal.flush();
      done += window.length;
    }
  } catch (e) {
    throw new ImportError(`publishing to ${where} failed after at least ${done} of ${records.length} records were stored: ${errorText(e)}; `
      + `the stream holds a partial import: delete it (nats stream rm ${subjects.stream}) before importing again`);
  } finally {
    await journal.close();
  }
  const info = await jsm.streams.info(subjects.stream).catch((e: unknown) => {
    if (isStreamNotFound(e)) throw new ImportError(`${where} was deleted during the import`);
    throw e;
  });
  return {
    stream: subjects.stream,
    jobs: records.filter((r) => r.t === 'job').length,
    rules: records.filter((r) => r.t === 'rule').length,
    lastSeq: info.state.last_seq,
    replicas: info.config.num_replicas,
  };
}
