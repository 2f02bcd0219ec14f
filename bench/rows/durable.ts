// Row 2: durable SET/s. Logfile mode with fsync_on_persist = true; 64 connections each in a
// closed loop (SET, wait for OK, next SET) for 5 s after a 1 s warm-up. An OK means the
// record is on disk, so the rate is bounded by commit rounds x records per round (group
// commit). Records per round come from the daemon's own "logfile closed" line at the
// graceful stop (rounds and records over its whole life, warm-up included).
//
// Two more runs put the figure in context, measured only: the same closed loop in memory
// mode (no disk at all: what this load reaches on this machine, the ceiling of the durable
// figure), and the durable run again with 4 SETs in flight per connection (clients that
// pipeline: how much the group commit itself carries).
import { closedLoopSets } from '../lib/closed-loop.ts';
import { sleep, stopDaemon, withDaemon } from '../lib/harness.ts';
import type { Figure, Row } from '../lib/suite.ts';

const CONNECTIONS = 64;
const WARMUP_MS = 1000;
const WINDOW_MS = 5000;
const PIPELINED_DEPTH = 4;

export interface Run {
  readonly perSecond: number;
  /** From the "logfile closed" line; null in memory mode. */
  readonly rounds: number | null;
  readonly records: number | null;
}

export interface LoopShape {
  readonly connections: number;
  readonly workers: number;
}

/**
 * The closed loop on a fresh daemon; `args` adds daemon flags (the cluster row's --cluster),
 * `shape` other connection and worker counts (the enqueue row's).
 */
export function closedLoop(
  name: string, persistence: 'logfile' | 'memory', depth: number, args: string[] = [], shape: LoopShape = { connections: CONNECTIONS, workers: 1 },
): Promise<Run> {
  return withDaemon(name, {
    workers: shape.workers,
    args,
    config: { database: { persistence, fsync_on_persist: true, compression_interval: 0 } },
  }, async (daemon) => {
    const load = await closedLoopSets(daemon.tcp, shape.connections, 'durable', depth);
    let replies = 0;
    let seconds = 0;
    try {
      await sleep(WARMUP_MS);
      const replies0 = load.replies;
      const t0 = performance.now();
      await sleep(WINDOW_MS);
      replies = load.replies - replies0;
      seconds = (performance.now() - t0) / 1000;
    } finally {
      await load.stop();
    }
    if (load.errors > 0) throw new Error(`${load.errors} SETs were answered ERROR`);
    await stopDaemon(daemon);
    const closed = persistence === 'memory' ? null : await daemon.waitForLog((r) => r['msg'] === 'logfile closed', 1000).catch(() => null);
    return {
      perSecond: replies / seconds,
      rounds: closed === null ? null : Number(closed['rounds']),
      records: closed === null ? null : Number(closed['records']),
    };
  });
}

export const row: Row = {
  name: 'durable',
  title: 'durable SET/s, logfile + fsync_on_persist, 64 closed-loop connections for 5 s',
  async run(opts) {
    const durable = await closedLoop('durable', 'logfile', 1);
    opts.progress(`  durable: ${durable.perSecond.toFixed(0)} SET/s; ${durable.rounds} commit rounds in all`);
    const memory = await closedLoop('durable-memory', 'memory', 1);
    opts.progress(`  the same load in memory mode: ${memory.perSecond.toFixed(0)} SET/s`);
    const pipelined = await closedLoop('durable-pipelined', 'logfile', PIPELINED_DEPTH);
    opts.progress(`  durable, ${PIPELINED_DEPTH} in flight per connection: ${pipelined.perSecond.toFixed(0)} SET/s`);
    const perRound = (run: Run): number | null => (run.rounds !== null && run.rounds > 0 ? run.records! / run.rounds : null);
    const figures: Figure[] = [
      {
        label: `durable SET/s, logfile + fsync, ${CONNECTIONS} closed-loop conn, ${WINDOW_MS / 1000} s`,
        value: durable.perSecond,
        unit: 'SET/s',
        target: { op: '>=', value: 50_000 },
        note: `${(100 * durable.perSecond / memory.perSecond).toFixed(0)} % of the same load in memory mode (next rows)`,
      },
      {
        label: 'records per commit round in that run (group commit)',
        value: perRound(durable),
        unit: 'records',
        digits: 1,
        note: durable.rounds === null
          ? 'the daemon logged no "logfile closed" line'
          : `${durable.records} records in ${durable.rounds} rounds (each one O_DSYNC write), from the daemon's "logfile closed" line`,
      },
      {
        label: `  same closed loop, memory mode (no disk: this load's ceiling here)`,
        value: memory.perSecond,
        unit: 'SET/s',
      },
      {
        label: `  durable, ${CONNECTIONS} conn x ${PIPELINED_DEPTH} SETs in flight each`,
        value: pipelined.perSecond,
        unit: 'SET/s',
        note: `${perRound(pipelined)?.toFixed(1) ?? '?'} records per commit round`,
      },
    ];
    return figures;
  },
};
