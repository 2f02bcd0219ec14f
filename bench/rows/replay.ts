// Row 7: replay of a 1 000 000-record logfile (1 000 000 distinct jobs, loaded through a
// logfile-mode daemon and stopped gracefully). A new daemon starts on the same directory; the
// figure is spawn -> its "state loaded" log line (bunyan `time`, ms resolution), which
// includes Node's own start; the note splits off "starting" -> "state loaded" (the replay
// proper) and spawn -> "ready". Then the primary's RSS with the replayed state.
import { benchDir, mb, pidOf, rssOf, startDaemon, stopDaemon, wallMs } from '../lib/harness.ts';
import { buildLogfile, logTimeMs } from '../lib/logfile-load.ts';
import type { Row } from '../lib/suite.ts';

const JOBS = 1_000_000;

export const row: Row = {
  name: 'replay',
  title: 'replay of a 1 000 000-record logfile: time to "state loaded", primary RSS after',
  run: async (opts) => {
    const dir = benchDir('replay');
    try {
      const built = await buildLogfile(dir.path, JOBS, 1, opts.progress);
      const spawnMs = wallMs();
      const t0 = performance.now();
      const daemon = await startDaemon(dir.path, {
        workers: 1,
        config: { database: { persistence: 'logfile', compression_interval: 0 } },
      });
      try {
        const readyMs = performance.now() - t0;
        const rss = rssOf(pidOf(daemon));
        const starting = await daemon.waitForLog((r) => r['msg'] === 'starting');
        const loaded = await daemon.waitForLog((r) => r['msg'] === 'state loaded');
        if (loaded['jobs'] !== JOBS) throw new Error(`replay loaded ${String(loaded['jobs'])} jobs, expected ${JOBS}`);
        const toLoadedMs = logTimeMs(loaded) - spawnMs;
        const replayMs = logTimeMs(loaded) - logTimeMs(starting);
        opts.progress(`  spawn -> state loaded ${toLoadedMs.toFixed(0)} ms, replay ${replayMs} ms, ready ${readyMs.toFixed(0)} ms`);
        return [
          {
            label: `replay ${JOBS.toLocaleString('en')} records: spawn -> "state loaded"`,
            value: toLoadedMs / 1000,
            unit: 's',
            digits: 2,
            target: { op: '<=', value: 3 },
            note: `logfile ${mb(built.bytes).toFixed(0)} MB; "starting" -> "state loaded" (the replay proper) ${(replayMs / 1000).toFixed(2)} s; spawn -> "ready" ${(readyMs / 1000).toFixed(2)} s; log times have ms resolution`,
          },
          {
            label: `primary RSS after replaying ${JOBS.toLocaleString('en')} records`,
            value: mb(rss.bytes),
            unit: 'MB',
            target: { op: '<=', value: 400 },
            note: `VmRSS at "ready"; peak during replay (VmHWM) ${mb(rss.peakBytes).toFixed(0)} MB; MB = 10^6 bytes`,
          },
        ];
      } finally {
        await stopDaemon(daemon);
      }
    } finally {
      dir.remove();
    }
  },
};
