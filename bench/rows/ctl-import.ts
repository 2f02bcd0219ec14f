// Row: `tickd ctl job import` (tickd-ctl(1) "IMPORT AND EXPORT"): 1 000 000 `ID WHEN` lines from
// a file into a fresh daemon in memory mode (1 worker), as a user runs it: the real bin/tickd
// in a child process, timed from spawn to exit (its start-up included), its JSON summary
// checked (every line imported) and the daemon's jobs_total checked after. The load generator
// is the client itself, on the same two cores as the daemon.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { LineClient, stat } from '../../test/helpers/client.ts';
import { TICKD } from '../../test/helpers/daemon.ts';
import { withDaemon } from '../lib/harness.ts';
import { FAR_FUTURE_NS } from '../lib/pipeline.ts';
import type { Row } from '../lib/suite.ts';

const JOBS = 1_000_000;

async function writeInput(path: string): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < JOBS; i += 10_000) {
    const lines: string[] = [];
    for (let j = i; j < i + 10_000; j++) lines.push(`imp.${j} ${FAR_FUTURE_NS + BigInt(j)}\n`);
    if (!out.write(lines.join(''))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Runs tickd ctl ARGS; its exit status, stdout, stderr and wall seconds. */
function runCtl(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const proc = spawn(process.execPath, [TICKD, 'ctl', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c) => { stdout += c; });
    proc.stderr.on('data', (c) => { stderr += c; });
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - t0) / 1000 }));
  });
}

export const row: Row = {
  name: 'ctl-import',
  title: 'tickd ctl job import of 1 000 000 ID WHEN lines, memory mode, 1 worker',
  run: (opts) => withDaemon('ctl-import', { workers: 1, config: { database: { persistence: 'memory' } } }, async (daemon, dir) => {
    const file = join(dir, 'jobs.txt');
    await writeInput(file);
    const addr = `${daemon.tcp.host}:${daemon.tcp.port}`;
    const startup = await runCtl(['help']);
    const r = await runCtl(['--addr', addr, '--json', 'job', 'import', file]);
    if (r.code !== 0) throw new Error(`tickd ctl exited ${r.code}: ${r.stderr.split('\n')[0]}`);
    const summary = JSON.parse(r.stdout) as { imported: number; failed: number };
    if (summary.imported !== JOBS || summary.failed !== 0) throw new Error(`summary ${r.stdout.trim()}`);
    const c = await LineClient.connect(daemon.tcp);
    const total = (await stat(c)).get('jobs_total');
    c.close();
    if (total !== String(JOBS)) throw new Error(`jobs_total ${total}, expected ${JOBS}`);
    const rate = JOBS / r.seconds;
    opts.progress(`  ${JOBS} jobs in ${r.seconds.toFixed(2)} s: ${Math.round(rate)} jobs/s (tickd ctl start-up alone ${startup.seconds.toFixed(2)} s)`);
    return [{
      label: `tickd ctl job import, ${JOBS.toLocaleString('en')} lines, memory, 1 worker`,
      value: rate,
      unit: 'jobs/s',
      target: { op: '>=', value: 100_000 },
      note: `${r.seconds.toFixed(2)} s from spawn to exit, start-up included (tickd ctl help alone: ${startup.seconds.toFixed(2)} s); 4 connections`,
    }];
  }),
};
