// Builds a big logfile the honest way, through a logfile-mode daemon (fsync off: only the
// loading is faster, the file is the same), then stops the daemon gracefully so the file is
// complete. `passes` > 1 SETs the same jobs again with new times: records that compaction
// folds away. Rows 7 (replay) and 8 (compaction) restart a daemon on the result.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { mb, startDaemon } from './harness.ts';
import { FAR_FUTURE_NS, loadSets } from './pipeline.ts';

export const LOGFILE = 'logfile';
const CONNECTIONS = 4;

export interface BuiltLogfile {
  readonly records: number;
  readonly bytes: number;
}

/** Builds the file and reports it (records, size, time) through `progress`. */
export async function buildLogfile(dir: string, jobs: number, passes: number, progress: (line: string) => void): Promise<BuiltLogfile> {
  const t0 = performance.now();
  const daemon = await startDaemon(dir, {
    workers: 1,
    config: { database: { persistence: 'logfile', fsync_on_persist: false, compression_interval: 0 } },
  });
  try {
    for (let pass = 0; pass < passes; pass++) {
      const shift = BigInt(pass) * 1_000_000_000n;
      await loadSets(daemon.tcp, CONNECTIONS, jobs / CONNECTIONS, 'log', (_c, i) => FAR_FUTURE_NS + shift + BigInt(i));
    }
  } finally {
    const exit = await daemon.stop();
    if (exit.code !== 0) throw new Error(`the loading daemon exited with ${exit.code ?? exit.signal}`);
  }
  const built = { records: jobs * passes, bytes: statSync(join(dir, LOGFILE)).size };
  progress(`  wrote ${built.records} records (${mb(built.bytes).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return built;
}

/** A bunyan record's `time` (ISO, ms resolution) as epoch ms. */
export function logTimeMs(rec: Record<string, unknown>): number {
  const t = Date.parse(String(rec['time']));
  if (Number.isNaN(t)) throw new Error(`log record without a time: ${JSON.stringify(rec)}`);
  return t;
}
