// The tick loop's own turns, as the daemon counts them: the histogram tickd.tick.turn_ms
// (lib/telemetry/instruments.ts), read from GET /metrics before and after a window. Where
// loop-delays.ts sees the longest delay of any turn of the primary's event loop (the tick's,
// a logfile write's, IPC from a worker or the runner child) and what the machine adds, this
// sees only the turns that ran ticks, each timed by the ticker itself, wall time.
import type { Daemon } from '../../test/helpers/daemon.ts';
import { httpOf } from './harness.ts';

const NAME = 'tickd_tick_turn_ms';

/** Cumulative counts: turns at or under each bucket's upper bound (ms), and all of them. */
export interface TurnCounts { readonly total: number; readonly atMost: ReadonlyMap<number, number> }

/** The turns between two readings: how many, how many over `limitMs`, and the bucket the longest fell in. */
export interface TurnWindow { readonly turns: number; readonly over: number; readonly longest: string }

export async function readTurns(daemon: Daemon): Promise<TurnCounts> {
  const text = await (await httpOf(daemon, '/metrics')).text();
  const atMost = new Map<number, number>();
  let total = 0;
  for (const m of text.matchAll(new RegExp(`^${NAME}_bucket\\{[^}]*le="([^"]+)"[^}]*\\} (\\S+)$`, 'gm'))) {
    if (m[1] === '+Inf') total = Number(m[2]);
    else atMost.set(Number(m[1]), Number(m[2]));
  }
  return { total, atMost };
}

export function turnsBetween(before: TurnCounts, after: TurnCounts, limitMs: number): TurnWindow {
  const turns = after.total - before.total;
  const within = (after.atMost.get(limitMs) ?? NaN) - (before.atMost.get(limitMs) ?? 0);
  const bounds = [...after.atMost.keys()].sort((a, b) => a - b);
  let longest = turns === 0 ? 'none' : `over ${bounds.at(-1)} ms`;
  for (const b of bounds) {
    if ((after.atMost.get(b) ?? 0) - (before.atMost.get(b) ?? 0) === turns) {
      const i = bounds.indexOf(b);
      longest = i === 0 ? `at most ${b} ms` : `${bounds[i - 1]}-${b} ms`;
      break;
    }
  }
  return { turns, over: turns - within, longest };
}
