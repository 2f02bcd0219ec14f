// Opens the persistence: memory, the logfile (replayed into the stores, its journal, the
// compaction controller), or in cluster mode the JetStream stream (cluster-storage.ts); the
// engine gets only the journal (null in memory mode: nothing on disk, nothing retained).
import type { ClusterOptions } from '../cli.ts';
import type { Config } from '../config/schema.ts';
import type { CheckpointRunner } from '../leadership/checkpoint-schedule.ts';
import { StartupError } from '../errors.ts';
import type { Folds } from '../logfile/folds.ts';
import { openLogfile } from '../logfile/open.ts';
import { applyRecord } from '../engine/journal.ts';
import type { Storage } from './storage.ts';
import { LogfileCorruptError, LogfileTooNewError } from '../logfile/replay.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import type { ScheduleStore } from '../store/schedules.ts';

/** Runs folds, and makes the cluster's checkpoints in the same process. */
export type FoldWorker = Folds & { readonly checkpoint: CheckpointRunner };

export interface StorageInputs {
  readonly config: Config;
  /** Cluster mode (the log on a JetStream stream), or null for the configured persistence. */
  readonly cluster: ClusterOptions | null;
  readonly jobs: JobStore;
  readonly rules: RuleStore;
  /** Filled from the logfile, or the stream in cluster mode. */
  readonly schedules: ScheduleStore;
  readonly log: Logger;
  /**
   * Makes what runs logfile compactions and, in cluster mode, the cluster's checkpoints (the
   * primary's compaction child), called only where one is used: memory mode has none, so a
   * memory-mode daemon starts no helper for it.
   */
  readonly folds: () => FoldWorker;
  /** True once a stop was requested: a wait for the cluster's lease gives up. */
  readonly stopped: () => boolean;
}

export async function openStorage(inputs: StorageInputs): Promise<Storage> {
  const { config, jobs, rules, schedules, log } = inputs;
  const db = config.database;
  if (inputs.cluster !== null) {
    const folds = inputs.folds(); // before the modules below: its spawner is forked while the heap is small
    // Loaded only in cluster mode: the NATS client and the leadership code are most of the
    // primary's modules, about 10 MB of a single node's RSS that would never run.
    const { openClusterStorage } = await import('./cluster-storage.ts');
    return openClusterStorage({
      opts: inputs.cluster, jobs, rules, schedules, log, stopped: inputs.stopped, checkpoints: folds.checkpoint, closeCheckpoints: () => folds.close(),
    });
  }
  if (db.persistence === 'memory') {
    return { kind: 'memory', path: null, journal: null, compression: () => 'idle', compactions: () => 0, startCompaction() {}, close: async () => {} };
  }
  let opened;
  try {
    opened = await openLogfile({
      path: db.logfile_path,
      fsync: db.fsync_on_persist,
      compressionIntervalSec: db.compression_interval,
      log: log.child({ component: 'logfile' }),
      folds: inputs.folds(),
      onRecord: (rec) => applyRecord(jobs, rules, rec, schedules),
    });
  } catch (err) {
    // A newer tickd's log is sound: a name of its own, so that neither a person nor a script
    // takes it for damage (and "restores a backup" over a good file).
    if (err instanceof LogfileTooNewError) throw new StartupError('logfile', 'LogfileTooNew', err.message);
    if (err instanceof LogfileCorruptError) throw new StartupError('logfile', 'LogfileError', err.message);
    const e = err as NodeJS.ErrnoException;
    throw new StartupError('logfile', 'LogfileError', `cannot open ${db.logfile_path}: ${e.code ?? e.message}`);
  }
  const { journal, compactor } = opened;
  return {
    kind: 'logfile',
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
