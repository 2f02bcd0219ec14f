// `tickd dump LOGFILE [--format text|json] [--compact] [--follow]`
// (tickd(8) THE DUMP SUBCOMMAND): offline, read-only inspection of a logfile. Line formats:
// dump-format.ts. --compact keeps the last state per (kind, identifier) (a job and a rule with
// the same identifier never collide) and leaves out removed entries. --follow then keeps
// printing records as they are appended and survives a compaction of the file (dump-follow.ts).
// Exit status: 0 done (a torn final record is reported on stderr and not shown), 1 the file
// cannot be read or holds a record that does not decode (after printing the records before
// it), 2 usage error.
import { open } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { foldRecord, isRemoval, recordKey } from './frames.ts';
import { formatRecord } from './dump-format.ts';
import type { DumpFormat } from './dump-format.ts';
import { followLogfile } from './dump-follow.ts';
import { LineSink, readRange } from './dump-read.ts';
import type { LogRecord } from '../engine/journal.ts';
import { LogfileCorruptError } from './replay.ts';

export const DUMP_USAGE = 'Usage: tickd dump LOGFILE [--format text|json] [--compact] [--follow]\n';

export interface DumpOptions {
  /** --follow: how often the file is looked at (default 250 ms). */
  readonly pollMs?: number;
  /** --follow runs until this is aborted (the CLI: until it is killed). */
  readonly signal?: AbortSignal;
}

interface DumpArgs {
  readonly path: string;
  readonly format: DumpFormat;
  readonly compact: boolean;
  readonly follow: boolean;
}

function parseDumpArgs(argv: readonly string[]): DumpArgs | string {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: { format: { type: 'string' }, compact: { type: 'boolean' }, follow: { type: 'boolean' } },
    });
  } catch (err) {
    return (err as Error).message;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) return positionals.length === 0 ? 'missing LOGFILE' : `one LOGFILE expected, got ${positionals.length}`;
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') return `--format must be text or json, got "${format}"`;
  return { path: positionals[0]!, format, compact: values.compact === true, follow: values.follow === true };
}

export async function runDump(argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream, opts: DumpOptions = {}): Promise<number> {
  const args = parseDumpArgs(argv);
  if (typeof args === 'string') {
    err.write(`tickd dump: ${args}\n${DUMP_USAGE}`);
    return 2;
  }
  let handle;
  try {
    handle = await open(args.path, 'r');
  } catch (e) {
    err.write(`tickd dump: cannot read ${args.path}: ${(e as Error).message}\n`);
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
    const end = await readRange(handle, args.path, 0, size, visit, sink);
    if (latest !== null) {
      for (const rec of latest.values()) show(rec);
      await sink.flush();
    }
    if (!args.follow) {
      if (end < size && !sink.broken) err.write(`tickd dump: ${args.path}: incomplete final record at byte offset ${end} (${size - end} bytes), not shown\n`);
      return 0;
    }
    const followed = { handle, ino, pos: end };
    handle = null; // followLogfile owns (and closes) it now
    await followLogfile({ path: args.path, format: args.format, sink, shown: shown!, show, pollMs: opts.pollMs ?? 250, signal: opts.signal }, followed);
    return 0;
  } catch (e) {
    await sink.flush();
    err.write(`tickd dump: ${e instanceof LogfileCorruptError ? e.message : `cannot read ${args.path}: ${(e as Error).message}`}\n`);
    return 1;
  } finally {
    await handle?.close();
  }
}
