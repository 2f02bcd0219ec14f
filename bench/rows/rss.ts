// Row 6: primary RSS per million planned jobs. Memory mode; VmRSS of the primary (the pid the
// harness spawned) once ready, then after 1 000 000 far-future jobs are loaded with pipelined
// SETs and the process has had 2 s to settle. The difference includes whatever garbage V8
// has not collected yet and heap headroom it keeps: what an operator would see, not the
// live object size.
import { LineClient, stat } from '../../test/helpers/client.ts';
import { mb, pidOf, rssOf, sleep, withDaemon } from '../lib/harness.ts';
import { loadSets } from '../lib/pipeline.ts';
import type { Row } from '../lib/suite.ts';

const JOBS = 1_000_000;
const CONNECTIONS = 4;
const SETTLE_MS = 2000;

export const row: Row = {
  name: 'rss',
  title: 'primary RSS per million planned jobs (memory mode)',
  run: (opts) => withDaemon('rss', { workers: 1, config: { database: { persistence: 'memory' } } }, async (daemon) => {
    const pid = pidOf(daemon);
    await sleep(SETTLE_MS);
    const before = rssOf(pid);
    const r = await loadSets(daemon.tcp, CONNECTIONS, JOBS / CONNECTIONS, 'rss');
    const client = await LineClient.connect(daemon.tcp);
    let planned: number;
    try {
      planned = Number((await stat(client)).get('jobs_planned'));
    } finally {
      client.close();
    }
    if (planned !== JOBS) throw new Error(`STAT says ${planned} planned jobs, expected ${JOBS}`);
    await sleep(SETTLE_MS);
    const after = rssOf(pid);
    const perMillion = mb(after.bytes - before.bytes) / (JOBS / 1e6);
    opts.progress(`  loaded in ${r.seconds.toFixed(1)} s; RSS ${mb(before.bytes).toFixed(0)} -> ${mb(after.bytes).toFixed(0)} MB`);
    return [{
      label: 'primary RSS per million planned jobs (memory mode)',
      value: perMillion,
      unit: 'MB',
      note: `primary VmRSS ${mb(before.bytes).toFixed(0)} MB when ready, ${mb(after.bytes).toFixed(0)} MB with ${JOBS.toLocaleString('en')} jobs (peak ${mb(after.peakBytes).toFixed(0)} MB); MB = 10^6 bytes`,
    }];
  }),
};
