// Opens the configured persistence: replays the logfile into the stores and returns the
// journal the engine appends to (null in memory mode: nothing on disk, nothing retained),
// the compaction controller, and the close step for shutdown.
import type { Config } from '../config/schema.ts';
import type { CompressionState } from '../domain/stat.ts';
import { StartupError } from '../errors.ts';
import type { Folds } from '../logfile/folds.ts';
import { openLogfile } from '../logfile/open.ts';
import type { Journal, LogRecord } from '../engine/journal.ts';
import { LogfileCorruptError } from '../logfile/replay.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';

export interface Storage {
  readonly path: string | null;
  readonly journal: Journal | null;
  readonly compression: () => CompressionState;
  readonly compactions: () => number;
  startCompaction(): void;
  /** Stops compaction, then writes and fsyncs what is pending. */
  close(): Promise<void>;
}

export function applyRecord(jobs: JobStore, rules: RuleStore, rec: LogRecord): void {
  switch (rec.t) {
    case 'job': jobs.put(rec.job); return;
    case 'rule': rules.put(rec.rule); return;
    case 'job.removed': jobs.delete(rec.id); return;
    case 'rule.removed': rules.delete(rec.id); return;
    default: {
      // JSON.stringify would throw on a job's bigint execution: name the tag instead
      const never: never = rec;
      throw new Error(`unknown record type ${String((never as { t: unknown }).t)}`);
    }
  }
}

/**
 * `folds` runs logfile compactions (the primary's compaction child); unused, and closed at
 * once, in memory mode.
 */
export async function openStorage(config: Config, jobs: JobStore, rules: RuleStore, log: Logger, folds: Folds): Promise<Storage> {
  const db = config.database;
  if (db.persistence === 'memory') {
    await folds.close();
    return { path: null, journal: null, compression: () => 'idle', compactions: () => 0, startCompaction() {}, close: async () => {} };
  }
  let opened;
  try {
    opened = await openLogfile({
      path: db.logfile_path,
      fsync: db.fsync_on_persist,
      compressionIntervalSec: db.compression_interval,
      log: log.child({ component: 'logfile' }),
      folds,
      onRecord: (rec) => applyRecord(jobs, rules, rec),
    });
  } catch (err) {
    if (err instanceof LogfileCorruptError) throw new StartupError('logfile', 'LogfileError', err.message);
    const e = err as NodeJS.ErrnoException;
    throw new StartupError('logfile', 'LogfileError', `cannot open ${db.logfile_path}: ${e.code ?? e.message}`);
  }
  const { journal, compactor } = opened;
  return {
    path: db.logfile_path,
    journal,
    compression: () => compactor.state,
    compactions: () => compactor.compactions,
    startCompaction: () => compactor.start(),
    close: async () => {
      await compactor.stop();
      await journal.close();
    },
  };
}
