// Row 2: durable SET/s. Logfile mode with fsync_on_persist = true; 64 connections each in a
// closed loop (SET, wait for OK, next SET) for 5 s after a 1 s warm-up. An OK means the
// record is on disk, so the rate is bounded by commit rounds x records per round (group
// commit). Records per round come from the daemon's own "logfile closed" line at the
// graceful stop (rounds and records over its whole life, warm-up included).
import { closedLoopSets } from '../lib/closed-loop.ts';
import { sleep, stopDaemon, withDaemon } from '../lib/harness.ts';
import type { Row } from '../lib/suite.ts';

const CONNECTIONS = 64;
const WARMUP_MS = 1000;
const WINDOW_MS = 5000;

export const row: Row = {
  name: 'durable',
  title: 'durable SET/s, logfile + fsync_on_persist, 64 closed-loop connections for 5 s',
  run: (opts) => withDaemon('durable', {
    workers: 1,
    config: { database: { persistence: 'logfile', fsync_on_persist: true, compression_interval: 0 } },
  }, async (daemon) => {
    const load = await closedLoopSets(daemon.tcp, CONNECTIONS, 'durable');
    let records = 0;
    let seconds = 0;
    try {
      await sleep(WARMUP_MS);
      const replies0 = load.replies;
      const t0 = performance.now();
      await sleep(WINDOW_MS);
      records = load.replies - replies0;
      seconds = (performance.now() - t0) / 1000;
    } finally {
      await load.stop();
    }
    if (load.errors > 0) throw new Error(`${load.errors} SETs were answered ERROR`);
    await stopDaemon(daemon);
    const closed = await daemon.waitForLog((r) => r['msg'] === 'logfile closed', 1000).catch(() => null);
    const rounds = Number(closed?.['rounds'] ?? 0);
    const written = Number(closed?.['records'] ?? 0);
    const perRound = rounds > 0 ? written / rounds : null;
    opts.progress(`  ${records} SETs in ${seconds.toFixed(2)} s; ${rounds} commit rounds in all`);
    return [
      {
        label: `durable SET/s, logfile + fsync, ${CONNECTIONS} closed-loop conn, ${WINDOW_MS / 1000} s`,
        value: records / seconds,
        unit: 'SET/s',
        target: { op: '>=', value: 50_000 },
      },
      {
        label: 'records per commit round in that run (group commit)',
        value: perRound,
        unit: 'records',
        digits: 1,
        note: perRound === null
          ? 'the daemon logged no "logfile closed" line'
          : `${written} records in ${rounds} rounds (each one O_DSYNC write), from the daemon's "logfile closed" line`,
      },
    ];
  }),
};
