// Startup wiring of logfile persistence, in the only safe order: replay (leftover
// `.to_compress` first, then the log) -> journal on the log -> compactor (not started).
// The compactor's folds run in a process spawned for them when a cycle begins
// (cluster/fold-process.ts).
// The caller starts the compactor once the daemon is ready, and at shutdown stops the
// compactor before closing the journal.
import type { Logger } from '../log.ts';
import { Compactor } from './compact.ts';
import type { Folds } from './folds.ts';
import type { LogRecord } from '../engine/journal.ts';
import { replayStartup } from './replay.ts';
import type { StartupReplay } from './replay.ts';
import { FileJournal } from './writer.ts';

export interface OpenLogfileOptions {
  readonly path: string;
  readonly fsync: boolean;
  /** `compression_interval` in seconds; 0 disables the periodic cycle. */
  readonly compressionIntervalSec: number;
  readonly log: Logger;
  /** Where the compactor's folds run; closed here if opening fails, else by the compactor's stop(). */
  readonly folds: Folds;
  /** Gets every replayed record, in order, before the journal opens. */
  readonly onRecord: (rec: LogRecord) => void;
  /** After each compaction cycle that ran (telemetry counter). */
  readonly onCompaction?: (outcome: 'success' | 'failure') => void;
}

export interface OpenedLogfile {
  readonly journal: FileJournal;
  readonly compactor: Compactor;
  readonly replay: StartupReplay;
}

/**
 * Throws LogfileCorruptError (replay.ts) for a complete record that does not decode, and
 * LogfileTooNewError for a record of a newer tickd; the log is then left as it is.
 */
export async function openLogfile(opts: OpenLogfileOptions): Promise<OpenedLogfile> {
  const { folds } = opts;
  try {
    const replay = await replayStartup(opts.path, opts.onRecord, opts.log);
    const journal = await FileJournal.open({ path: opts.path, fsync: opts.fsync, log: opts.log });
    const compactor = new Compactor({
      path: opts.path,
      journal,
      intervalSec: opts.compressionIntervalSec,
      log: opts.log,
      folds,
      ...(opts.onCompaction === undefined ? {} : { onCycle: opts.onCompaction }),
    });
    return { journal, compactor, replay };
  } catch (err) {
    await folds.close();
    throw err;
  }
}
