// How `tickd ctl watch` shows what it sees (tickd-ctl(1) WATCH). Pure.
// - JSON lines (stdout not a terminal, or --json): one `stat` object per poll, then one `job`
//   object per event; times as RFC 3339 strings, nanosecond values as exact integers.
// - A terminal: the screen is redrawn in place every poll: a header with the STAT counts and
//   rates, then the latest events, newest first, as many as fit.
import { toJson, type JsonValue } from '../http/json.ts';
import { colorStatus, formatTime } from './output.ts';
import type { JobEvent, Rates } from './watch-diff.ts';

export interface PollView {
  readonly addr: string;
  readonly prefix: string;
  readonly intervalMs: number;
  readonly atNs: bigint;
  readonly stat: ReadonlyArray<readonly [string, string]>;
  readonly rates: Rates | null;
  /** Jobs the poll listed. */
  readonly watched: number;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

export function statLine(v: PollView): string {
  const stat: Record<string, JsonValue> = {};
  for (const [k, val] of v.stat) stat[k] = /^-?\d+$/.test(val) ? BigInt(val) : val;
  const rates = v.rates === null ? null : { jobs_total: round(v.rates.jobs_total), jobs_executed: round(v.rates.jobs_executed), jobs_failed: round(v.rates.jobs_failed) };
  return `${toJson({ type: 'stat', time: formatTime(v.atNs), prefix: v.prefix, watched: v.watched, stat, rates_per_s: rates })}\n`;
}

export function eventLine(e: JobEvent): string {
  return `${toJson({
    type: 'job', time: formatTime(e.seenNs), id: e.id, from: e.from, to: e.to, execution: e.execution, lateness_max_ns: e.latenessMaxNs,
  })}\n`;
}

/** A duration in the unit that reads best: 850 us, 12.3 ms, 4.1 s, 3 min. */
export function formatDuration(ns: bigint): string {
  const neg = ns < 0n;
  const a = Number(neg ? -ns : ns);
  const text = a < 1e6 ? `${Math.round(a / 1e3)} us` : a < 1e9 ? `${(a / 1e6).toFixed(1)} ms` : a < 60e9 ? `${(a / 1e9).toFixed(1)} s` : `${Math.round(a / 60e9)} min`;
  return neg ? `-${text}` : text;
}

function signed(n: number): string {
  return `${n >= 0 ? '+' : ''}${n.toFixed(1)}`;
}

export function eventCells(e: JobEvent, color: boolean): string {
  const from = e.from === null ? '(new)' : colorStatus(e.from, color);
  const to = e.to === null ? '(removed)' : colorStatus(e.to, color);
  const late = e.latenessMaxNs === null ? '' : `  late <= ${formatDuration(e.latenessMaxNs)}`;
  return `${formatTime(e.seenNs).slice(11, 23)}  ${e.id}  ${from} -> ${to}  at ${formatTime(e.execution)}${late}`;
}

/** The whole screen, drawn over the previous one: cursor home, each line cleared to its end. */
export function screen(v: PollView, events: readonly JobEvent[], size: { columns: number; rows: number }, color: boolean): string {
  const s = new Map(v.stat);
  const get = (k: string): string => s.get(k) ?? '?';
  const rates = v.rates === null ? 'rates: (after the next poll)' : `rates per s (net): executed ${signed(v.rates.jobs_executed)}  failed ${signed(v.rates.jobs_failed)}  jobs ${signed(v.rates.jobs_total)}`;
  const head = [
    `tickd ctl watch ${v.addr}  prefix ${JSON.stringify(v.prefix)}  every ${formatDuration(BigInt(v.intervalMs) * 1_000_000n)}  ${formatTime(v.atNs).slice(0, 19)}Z  (Ctrl-C quits)`,
    `jobs ${get('jobs_total')}: planned ${get('jobs_planned')}  triggered ${get('jobs_triggered')}  executed ${get('jobs_executed')}  failed ${get('jobs_failed')}  rules ${get('rules_total')}`,
    `executions pending ${get('executions_pending')}  inflight ${get('executions_inflight')}  connections ${get('connections')}  watched ${v.watched}`,
    rates,
    '',
    events.length === 0 ? 'no status change seen yet' : 'latest changes (late: upper bound, on this clock)',
  ];
  const room = Math.max(0, size.rows - head.length - 1);
  const shown = events.slice(-room).reverse().map((e) => eventCells(e, color));
  const cut = (line: string): string => (line.length > size.columns && !color ? line.slice(0, size.columns) : line);
  return `\x1b[H${[...head, ...shown].map((l) => `${cut(l)}\x1b[K`).join('\n')}\n\x1b[J`;
}
