// `tickd dump --cluster URL[,URL...] [--cluster-name NAME] [--format text|json] [--compact]`
// (tickd(8) THE DUMP SUBCOMMAND): the records of a cluster's stream, in stream order, in the
// very lines a logfile dump prints (dump-format.ts). Read-only and safe while a leader writes:
// an ordered consumer (ephemeral, no acknowledgements, in memory, gone when the dump ends)
// reads from the first message on. Also the NATS connection of the offline commands (dump,
// import): one attempt, a one-line error naming the URLs (never their credentials).
//
// Where the read stops: see replay.ts (readStream).
//
// The stream keeps one message per subject, so its dump is already compact; --compact folds
// it anyway (frames.ts foldRecord, as for a logfile), which drops a removal caught on the
// stream before its deletion and otherwise changes nothing.
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { isStreamNotFound } from '../jetstream/api-errors.ts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterOptions } from '../cli.ts';
import type { LogRecord } from '../engine/journal.ts';
import { formatRecord, type DumpFormat } from '../logfile/dump-format.ts';
import { LineSink } from '../logfile/dump-read.ts';
import { foldRecord } from '../logfile/frames.ts';
import { connectOffline, showUrls } from '../jetstream/connect.ts';
import { readStream, trusted } from '../jetstream/replay.ts';
import { ClusterKeys } from '../jetstream/cluster-keys.ts';
import type { StreamTrust } from '../jetstream/quarantine.ts';
import { clusterSubjects } from '../jetstream/subjects.ts';
import { errorText } from '../errors.ts';

export interface StreamDumpArgs {
  readonly cluster: ClusterOptions;
  readonly format: DumpFormat;
  readonly compact: boolean;
}

/** The stream side of runDump (lib/tools/dump.ts): prints, returns the exit status. */
export async function dumpStream(args: StreamDumpArgs, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const where = showUrls(args.cluster.urls);
  const stream = clusterSubjects(args.cluster.name).stream;
  let nc: NatsConnection;
  let keys: ClusterKeys;
  try {
    keys = ClusterKeys.fromFile(args.cluster.secretFile).keys;
    nc = await connectOffline(args.cluster, 'tickd dump');
  } catch (e) {
    err.write(`tickd dump: ${(e as Error).message}\n`);
    return 1;
  }
  const sink = new LineSink(out);
  const latest = args.compact ? new Map<string, LogRecord>() : null;
  const show = (rec: LogRecord) => sink.line(formatRecord(rec, args.format));
  const visit = latest === null ? show : (rec: LogRecord) => foldRecord(latest, rec, () => rec);
  try {
    // Messages that are no record of the cluster's (quarantine.ts) are named on stderr, never printed as records.
    const trust: StreamTrust = { keys, quarantined: (q) => err.write(`tickd dump: quarantined: message ${q.seq} (${q.subject}): ${q.why}\n`) };
    await readStream(jetstream(nc), await jetstreamManager(nc), stream, trusted(trust, stream), visit, () => sink.flush());
    if (latest !== null) {
      for (const rec of latest.values()) show(rec);
      await sink.flush();
    }
    return 0;
  } catch (e) {
    await sink.flush();
    const text = isStreamNotFound(e) ? `no stream ${stream} on NATS at ${where} (--cluster-name ${args.cluster.name})`
      : `reading stream ${stream} on NATS at ${where}: ${errorText(e)}`;
    err.write(`tickd dump: ${text}\n`);
    return 1;
  } finally {
    await nc.close();
  }
}
