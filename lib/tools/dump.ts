// `tickd dump LOGFILE [--format text|json] [--compact] [--follow]`
// (tickd(8) THE DUMP SUBCOMMAND): offline, read-only inspection of a logfile. With
// `--cluster URL[,URL...]` instead of LOGFILE, of a cluster's stream: only the arguments are
// read here, the rest is lib/tools/dump-stream.ts (loaded only then; --follow is a
// logfile's alone). Line formats:
// dump-format.ts. --compact keeps the last state per (kind, identifier) (a job and a rule with
// the same identifier never collide) and leaves out removed entries and format marks (no
// state: frames.ts foldRecord). --follow then keeps
// printing records as they are appended and survives a compaction of the file (dump-follow.ts).
// Exit status: 0 done (a torn final record is reported on stderr and not shown), 1 the file
// cannot be read or holds a record that does not decode or that only a newer tickd reads (after
// printing the records before it; the line on stderr says which), 2 usage error.
import { open } from 'node:fs/promises';
import { foldRecord, isRemoval, recordKey } from '../logfile/frames.ts';
import { formatRecord } from '../logfile/dump-format.ts';
import type { DumpFormat } from '../logfile/dump-format.ts';
import { followLogfile } from '../logfile/dump-follow.ts';
import { LineSink, readRange } from '../logfile/dump-read.ts';
import type { LogRecord } from '../engine/journal.ts';
import { LogfileUnreadableError } from '../logfile/replay.ts';
import { CLUSTER_CONNECTION_OPTIONS, parseArgsOrUsage, parseCluster, SECRET_REQUIRED, type ClusterOptions } from '../cli.ts';

export const DUMP_USAGE = 'Usage: tickd dump LOGFILE [--format text|json] [--compact] [--follow]\n'
  + '       tickd dump --cluster URL[,URL...] [--cluster-name NAME] [--cluster-creds FILE] [--cluster-ca FILE]\n'
  + '                  [--format text|json] [--compact]\n';

export interface DumpOptions {
  /** --follow: how often the file is looked at (default 250 ms). */
  readonly pollMs?: number;
  /** --follow runs until this is aborted (the CLI: until it is killed). */
  readonly signal?: AbortSignal;
}

interface DumpArgs {
  /** A string: the logfile; else the cluster whose stream is dumped. */
  readonly source: string | ClusterOptions;
  readonly format: DumpFormat;
  readonly compact: boolean;
  readonly follow: boolean;
}

function parseDumpArgs(argv: readonly string[]): DumpArgs | string {
  const parsed = parseArgsOrUsage({
    args: argv,
    allowPositionals: true,
    options: {
      format: { type: 'string' }, compact: { type: 'boolean' }, follow: { type: 'boolean' },
      ...CLUSTER_CONNECTION_OPTIONS,
    },
  });
  if (typeof parsed === 'string') return parsed;
  const { values, positionals } = parsed;
  const cluster = parseCluster(values);
  if (typeof cluster === 'string') return cluster;
  if (cluster !== null) {
    if (positionals.length > 0) return 'give LOGFILE or --cluster, not both';
    if (values.follow === true) return '--follow reads a logfile only, not a cluster\'s stream';
  } else if (positionals.length !== 1) {
    return positionals.length === 0 ? 'missing LOGFILE' : `one LOGFILE expected, got ${positionals.length}`;
  }
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') return `--format must be text or json, got "${format}"`;
  if (cluster !== null && cluster.secretFile === null) return SECRET_REQUIRED;
  return { source: cluster ?? positionals[0]!, format, compact: values.compact === true, follow: values.follow === true };
}

export async function runDump(argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream, opts: DumpOptions = {}): Promise<number> {
  const args = parseDumpArgs(argv);
  if (typeof args === 'string') {
    err.write(`tickd dump: ${args}\n${DUMP_USAGE}`);
    return 2;
  }
  if (typeof args.source !== 'string') {
    const { dumpStream } = await import('./dump-stream.ts');
    return dumpStream({ cluster: args.source, format: args.format, compact: args.compact }, out, err);
  }
  const path = args.source;
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (e) {
    err.write(`tickd dump: cannot read ${path}: ${(e as Error).message}\n`);
    return 1;
  }
  const sink = new LineSink(out);
  // What has been shown, key -> line: needed to follow the file across a compaction.
  const shown = args.follow ? new Map<string, string>() : null;
  const latest = args.compact ? new Map<string, LogRecord>() : null;
  const show = (rec: LogRecord) => {
    const line = formatRecord(rec, args.format);
    sink.line(line);
    if (shown === null) return;
    if (isRemoval(rec)) shown.delete(recordKey(rec));
    else shown.set(recordKey(rec), line);
  };
  const visit = latest === null ? show : (rec: LogRecord) => foldRecord(latest, rec, () => rec);
  try {
    const { size, ino } = await handle.stat();
    const end = await readRange(handle, path, 0, size, visit, sink);
    if (latest !== null) {
      for (const rec of latest.values()) show(rec);
      await sink.flush();
    }
    if (!args.follow) {
      if (end < size && !sink.broken) err.write(`tickd dump: ${path}: incomplete final record at byte offset ${end} (${size - end} bytes), not shown\n`);
      return 0;
    }
    const followed = { handle, ino, pos: end };
    handle = null; // followLogfile owns (and closes) it now
    await followLogfile({ path: path, format: args.format, sink, shown: shown!, show, pollMs: opts.pollMs ?? 250, signal: opts.signal }, followed);
    return 0;
  } catch (e) {
    await sink.flush();
    err.write(`tickd dump: ${e instanceof LogfileUnreadableError ? e.message : `cannot read ${path}: ${(e as Error).message}`}\n`);
    return 1;
  } finally {
    await handle?.close();
  }
}
