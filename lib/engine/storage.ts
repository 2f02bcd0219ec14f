// Opens the configured persistence: replays the logfile into the stores and returns the
// journal the engine appends to, or nothing at all in memory mode.
import type { Config } from '../config/schema.ts';
import type { CompressionState } from '../domain/stat.ts';
import type { Journal } from '../logfile/record.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';

export interface Storage {
  readonly path: string | null;
  readonly journal: Journal | null;
  readonly compression: () => CompressionState;
  startCompaction(): void;
  close(): Promise<void>;
}

export async function openStorage(config: Config, _jobs: JobStore, _rules: RuleStore, _log: Logger): Promise<Storage> {
  if (config.database.persistence === 'memory') {
    return { path: null, journal: null, compression: () => 'idle', startCompaction() {}, close: async () => {} };
  }
  throw new Error('logfile persistence: not wired yet');
}
