// Issue 37, item 11: 1 000 000 schedules (--quick: 100 000) replayed from the logfile at
// startup, target <= 3 s. The logfile is written directly with the daemon's encoder
// (bench/lib/schedule-load.ts: one type 5 record per schedule, fresh states decided up to
// the moment of writing, nothing fired), since loading a million schedules through a daemon
// would take longer than the measure. Each state carries its `next` nominal time, as the
// daemon keeps it, computed once per file with the daemon's Calendar. Two files, one daemon
// each: `every=24h` schedules (aligned to midnight UTC, so nothing is decided during the run)
// and a nightly cron `30 2 * * *` in Europe/Berlin, since a timing that reached a calendar at
// startup would cost croner's ~100 µs a schedule (lib/domain/schedule.ts `next`); after the
// replay ("state loaded") the engine arms every schedule (lib/engine/scheduling.ts armAll).
// The figure is spawn -> the "ready" log line (measured here, as replay.ts's "ready"), since
// arming comes after "state loaded"; the note splits off spawn -> "state loaded" and the
// replay proper ("starting" -> "state loaded"). Then the primary's RSS at ready.
import { join } from 'node:path';
import { benchDir, mb, pidOf, rssOf, startDaemon, stopDaemon, wallMs, wallNs } from '../lib/harness.ts';
import { LOGFILE, logTimeMs } from '../lib/logfile-load.ts';
import { writeScheduleLogfile } from '../lib/schedule-load.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';

const KINDS = [
  { name: 'every=24h', specs: [{ every: '24h' }] },
  { name: 'cron "30 2 * * *" tz=Europe/Berlin', specs: [{ cron: '30 2 * * *', tz: 'Europe/Berlin' }] },
] as const;
/** Generous: a replay that asked a calendar for each cron schedule would take minutes. */
const READY_TIMEOUT_MS = 600_000;

async function replayOne(kind: (typeof KINDS)[number], count: number, opts: RowOptions): Promise<Figure[]> {
  const dir = benchDir('schedules-replay');
  try {
    const t0 = performance.now();
    const bytes = await writeScheduleLogfile(join(dir.path, LOGFILE), count, 'sr', wallNs(), kind.specs);
    opts.progress(`  ${kind.name}: wrote ${count} schedule records (${mb(bytes).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const spawnMs = wallMs();
    const started = performance.now();
    const daemon = await startDaemon(dir.path, {
      workers: 1,
      readyTimeoutMs: READY_TIMEOUT_MS,
      config: { database: { persistence: 'logfile', compression_interval: 0 } },
    });
    try {
      const readyMs = performance.now() - started;
      const rss = rssOf(pidOf(daemon));
      const starting = await daemon.waitForLog((r) => r['msg'] === 'starting');
      const loaded = await daemon.waitForLog((r) => r['msg'] === 'state loaded');
      if (loaded['schedules'] !== count) throw new Error(`replay loaded ${String(loaded['schedules'])} schedules, expected ${count}`);
      const toLoadedMs = logTimeMs(loaded) - spawnMs;
      const replayMs = logTimeMs(loaded) - logTimeMs(starting);
      opts.progress(`  ${kind.name}: spawn -> ready ${readyMs.toFixed(0)} ms (state loaded ${toLoadedMs.toFixed(0)} ms, replay ${replayMs} ms)`);
      const size = count.toLocaleString('en');
      return [
        {
          label: `replay ${size} schedules (${kind.name}): spawn -> "ready"${opts.full ? '' : ' (quick size)'}`,
          value: readyMs / 1000,
          unit: 's',
          digits: 2,
          target: { op: '<=', value: 3 },
          note: `logfile ${mb(bytes).toFixed(0)} MB of type 5 records; spawn -> "state loaded" ${(toLoadedMs / 1000).toFixed(2)} s, of which ` +
            `"starting" -> "state loaded" (the replay proper) ${(replayMs / 1000).toFixed(2)} s; the rest, "state loaded" -> "ready", is mostly ` +
            `arming every schedule (armAll); log times have ms resolution`,
        },
        {
          label: `  primary RSS after replaying ${size} schedules (${kind.name})`,
          value: mb(rss.bytes),
          unit: 'MB',
          note: `VmRSS at "ready"; peak (VmHWM) ${mb(rss.peakBytes).toFixed(0)} MB; MB = 10^6 bytes`,
        },
      ];
    } finally {
      await stopDaemon(daemon);
    }
  } finally {
    dir.remove();
  }
}

export const row: Row = {
  name: 'schedules-replay',
  title: 'replay of 1 000 000 schedules (--quick: 100 000) from the logfile, intervals and cron: spawn -> "ready"',
  sized: true,
  run: async (opts) => {
    const count = opts.full ? 1_000_000 : 100_000;
    const figures: Figure[] = [];
    for (const kind of KINDS) figures.push(...await replayOne(kind, count, opts));
    return figures;
  },
};
