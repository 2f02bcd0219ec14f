// Issue 37, item 11: primary RSS growth per schedule, target <= 1 KiB. Measured as rss.ts
// measures jobs: memory mode; VmRSS of the primary (the pid the harness spawned) once ready
// and rested 2 s, then after 100 000 schedules (--quick: 20 000) are loaded with pipelined
// `SCHEDULE SET`s and the process has had 2 s to settle. The schedules' next occurrence is far
// away (`0 0 1 1 *`, New Year, UTC), so none is decided and no job is made during the run:
// the growth is the schedules alone (state, schedule, id index, due-heap slot). As in rss.ts,
// the difference includes garbage V8 has not collected yet and the heap headroom it keeps
// (the daemon cannot be asked to collect): what an operator would see.
import { LineClient } from '../../test/helpers/client.ts';
import { mb, pidOf, rssOf, sleep, withDaemon } from '../lib/harness.ts';
import { loadSchedules } from '../lib/schedule-load.ts';
import type { Row } from '../lib/suite.ts';

const CONNECTIONS = 4;
const SETTLE_MS = 2000;
const SPEC = '"cron=0 0 1 1 *"';

export const row: Row = {
  name: 'schedules-rss',
  title: 'primary RSS growth per schedule, 100 000 far-future schedules (--quick: 20 000; memory mode)',
  sized: true,
  run: (opts) => withDaemon('schedules-rss', { workers: 1, config: { database: { persistence: 'memory' } } }, async (daemon) => {
    const count = opts.full ? 100_000 : 20_000;
    const pid = pidOf(daemon);
    await sleep(SETTLE_MS);
    const before = rssOf(pid);
    const r = await loadSchedules(daemon.tcp, CONNECTIONS, count / CONNECTIONS, 'srss', SPEC);
    // Every SET was answered OK (loadSchedules throws otherwise); the last one of each
    // connection is there, and no occurrence job was made.
    const client = await LineClient.connect(daemon.tcp);
    try {
      for (let c = 0; c < CONNECTIONS; c++) {
        const reply = await client.request('g', `SCHEDULE GET srss.${c}.${count / CONNECTIONS - 1}`);
        if (!reply[0]!.startsWith('g OK ')) throw new Error(`SCHEDULE GET answered ${reply.join(' / ')}`);
      }
      const jobs = (await client.request('st', 'STAT')).find((l) => l.startsWith('st jobs_total '));
      if (jobs !== 'st jobs_total 0') throw new Error(`STAT says ${jobs ?? 'nothing'}: an occurrence was made`);
    } finally {
      client.close();
    }
    await sleep(SETTLE_MS);
    const after = rssOf(pid);
    const perSchedule = (after.bytes - before.bytes) / count / 1024;
    opts.progress(`  loaded ${count} schedules in ${r.seconds.toFixed(1)} s (${Math.round(r.perSecond)}/s); RSS ${mb(before.bytes).toFixed(0)} -> ${mb(after.bytes).toFixed(0)} MB`);
    return [{
      label: `primary RSS growth per schedule, ${count.toLocaleString('en')} far-future cron schedules${opts.full ? '' : ' (quick size)'}`,
      value: perSchedule,
      unit: 'KiB',
      digits: 2,
      target: { op: '<=', value: 1 },
      note: `primary VmRSS ${mb(before.bytes).toFixed(0)} MB when ready, ${mb(after.bytes).toFixed(0)} MB with ${count.toLocaleString('en')} schedules ` +
        `(peak ${mb(after.peakBytes).toFixed(0)} MB), each read after 2 s of rest; loaded by 4 pipelining connections at ${Math.round(r.perSecond).toLocaleString('en')} SCHEDULE SET/s; KiB = 1024 bytes, MB = 10^6`,
    }];
  }),
};
