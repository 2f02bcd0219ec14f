// The benchmark suite (`npm run bench` = `node bench/run.ts`): runs the rows one after the
// other, each with its own daemon and temp dir, and prints ONE table: figure, value, target
// where the issue sets one, and the command that reproduces that row alone.
//
//   node bench/run.ts [row ...] [--full | --quick] [--list]
//
// Sizes: rows marked `sized` have a quick and a full size. The whole suite uses the quick
// size unless --full; a row named on the command line uses the full size unless --quick.
// Progress goes to stderr, the table to stdout. Speed is measured, never asserted: a missed
// target is printed as MISSED and the exit status stays 0; a row that fails exits 1.
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { row as burst } from './rows/burst.ts';
import { row as burstMillion } from './rows/burst-million.ts';
import { row as cluster } from './rows/cluster.ts';
import { row as clusterFailover } from './rows/cluster-failover.ts';
import { row as compaction } from './rows/compaction.ts';
import { row as clientPipelined } from './rows/client-pipelined.ts';
import { row as ctlImport } from './rows/ctl-import.ts';
import { row as durable } from './rows/durable.ts';
import { row as enqueue } from './rows/enqueue.ts';
import { row as fireDirect } from './rows/fire-direct.ts';
import { row as footprint } from './rows/footprint.ts';
import { row as fireHttp } from './rows/fire-http.ts';
import { row as fireRedis } from './rows/fire-redis.ts';
import { row as httpPut } from './rows/http-put.ts';
import { row as lateness } from './rows/lateness.ts';
import { row as retries } from './rows/retries.ts';
import { row as listing } from './rows/listing.ts';
import { row as pipelined } from './rows/pipelined.ts';
import { row as placementCapacity } from './rows/placement-capacity.ts';
import { row as placementHttp } from './rows/placement-http.ts';
import { row as replay } from './rows/replay.ts';
import { row as rss } from './rows/rss.ts';
import { row as schedulesMinute } from './rows/schedules-minute.ts';
import { row as schedulesReplay } from './rows/schedules-replay.ts';
import { row as schedulesSpread } from './rows/schedules-spread.ts';
import { row as schedulesRss } from './rows/schedules-rss.ts';
import { row as workers } from './rows/workers.ts';
import type { Row } from './lib/suite.ts';
import { renderTable, type ResultLine } from './lib/table.ts';

const ROWS: readonly Row[] = [pipelined, durable, enqueue, fireDirect, fireHttp, fireRedis, retries, burst, burstMillion, lateness, rss, listing, replay, compaction, httpPut, ctlImport, clientPipelined, schedulesMinute, schedulesSpread, schedulesRss, schedulesReplay, cluster, clusterFailover, placementCapacity, placementHttp, workers, footprint];

const USAGE = `usage: node bench/run.ts [row ...] [--full | --quick] [--list]
rows: ${ROWS.map((r) => r.name).join(', ')} (default: all)
  --full   big sizes (the whole suite otherwise uses the quick ones)
  --quick  quick sizes (a row named alone otherwise uses the full ones)
  --list   the rows and what they measure
`;

function parse(): { rows: Row[]; full: boolean } | null {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { full: { type: 'boolean' }, quick: { type: 'boolean' }, list: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const { values, positionals } = parsed;
  if (values.help === true) { process.stdout.write(USAGE); return null; }
  if (values.list === true) {
    for (const r of ROWS) process.stdout.write(`${r.name.padEnd(12)} ${r.title}\n`);
    return null;
  }
  if (values.full === true && values.quick === true) {
    process.stderr.write(`--full and --quick exclude each other\n${USAGE}`);
    process.exit(2);
  }
  const unknown = positionals.filter((p) => !ROWS.some((r) => r.name === p));
  if (unknown.length > 0) {
    process.stderr.write(`unknown row ${unknown.join(', ')}\n${USAGE}`);
    process.exit(2);
  }
  const rows = positionals.length === 0 ? [...ROWS] : ROWS.filter((r) => positionals.includes(r.name));
  const full = values.full === true || (values.quick !== true && positionals.length > 0);
  return { rows, full };
}

function reproduce(row: Row, full: boolean): string {
  // Alone, a sized row defaults to full: only the quick size needs saying.
  return `node bench/run.ts ${row.name}${row.sized === true && !full ? ' --quick' : ''}`;
}

async function main(): Promise<number> {
  const plan = parse();
  if (plan === null) return 0;
  // Ctrl-C or kill: exit through 'exit' so the harness kills the daemons and removes the dirs.
  process.on('SIGINT', () => process.exit(130));
  process.on('SIGTERM', () => process.exit(143));
  const progress = (line: string): void => { process.stderr.write(`${line}\n`); };
  const lines: ResultLine[] = [];
  let failed = 0;
  const t0 = performance.now();
  for (const row of plan.rows) {
    progress(`${row.name}: ${row.title}`);
    const started = performance.now();
    try {
      for (const figure of await row.run({ full: plan.full, progress })) lines.push({ figure, reproduce: reproduce(row, plan.full) });
    } catch (err) {
      failed++;
      const message = (err as Error)?.message?.split('\n')[0] ?? String(err);
      progress(`  FAILED: ${(err as Error)?.stack ?? message}`);
      lines.push({ figure: { label: row.title, value: null, unit: '', note: `row failed: ${message}` }, reproduce: reproduce(row, plan.full) });
    }
    progress(`  (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
  const sized = plan.rows.some((r) => r.sized === true) ? `, ${plan.full ? 'full' : 'quick'} sizes` : '';
  process.stdout.write(`tickd benchmarks: ${new Date().toISOString()}, Node ${process.version}, ${availableParallelism()} cores shared by the daemon and the load generator${sized}, ${((performance.now() - t0) / 1000).toFixed(0)} s\n\n`);
  process.stdout.write(`${renderTable(lines)}\n`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
