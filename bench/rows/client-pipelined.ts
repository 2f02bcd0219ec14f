// Row: the client library (lib/client, doc/client.md) pipelining 1 000 000 SETs into a fresh
// daemon in memory mode (1 worker): jobs/s from the first SET to the last answer, on one
// connection, through setMany (backpressure: at most maxInflight unanswered, as many again
// waiting); and the client side's CPU per SET (process.cpuUsage of this process, user + system,
// over the load, divided by the count), the cost a service pays for each call. The daemon's
// jobs_total is checked after. A second pass makes the same SETs as 1 000 000 set() calls
// (a promise and a timeout timer each, 4096 at a time; new jobs too), the way a service calls it. The load generator shares the machine's cores with the daemon.
import { connect } from '../../lib/client/index.ts';
import { withDaemon } from '../lib/harness.ts';
import { FAR_FUTURE_NS } from '../lib/pipeline.ts';
import type { Row } from '../lib/suite.ts';

const JOBS = 1_000_000;

function* entries(count: number, prefix: string): Generator<readonly [string, bigint]> {
  for (let i = 0; i < count; i++) yield [`${prefix}.${i}`, FAR_FUTURE_NS + BigInt(i)];
}

export const row: Row = {
  name: 'client-pipelined',
  title: 'the client library pipelining 1 000 000 SETs on one connection, memory mode, 1 worker; client CPU per SET',
  run: (opts) => withDaemon('client-pipelined', { workers: 1, config: { database: { persistence: 'memory' } } }, async (daemon) => {
    const client = await connect({ addresses: `${daemon.tcp.host}:${daemon.tcp.port}` });
    try {
      await client.setMany(entries(10_000, 'warm'));
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await client.setMany(entries(JOBS, 'cl'));
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      if (r.ok !== JOBS || r.failed !== 0) throw new Error(`setMany ${JSON.stringify(r)}`);
      const total = (await client.stat())['jobs_total'];
      if (total !== String(JOBS + 10_000)) throw new Error(`jobs_total ${total}, expected ${JOBS + 10_000}`);
      const cpuCalls0 = process.cpuUsage();
      const t1 = performance.now();
      let window: Promise<void>[] = [];
      for (const [id, ns] of entries(JOBS, 'cs')) {
        window.push(client.set(id, ns));
        if (window.length === 4096) {
          await Promise.all(window);
          window = [];
        }
      }
      await Promise.all(window);
      const callSeconds = (performance.now() - t1) / 1000;
      const cpuCalls = process.cpuUsage(cpuCalls0);
      const rate = JOBS / seconds;
      const cpuUsPerSet = (cpu.user + cpu.system) / JOBS;
      opts.progress(`  set() calls: ${Math.round(JOBS / callSeconds)} SET/s, client CPU ${((cpuCalls.user + cpuCalls.system) / JOBS).toFixed(2)} us per call`);
      opts.progress(`  ${JOBS} SETs in ${seconds.toFixed(2)} s: ${Math.round(rate)} SET/s; client CPU ${cpuUsPerSet.toFixed(2)} us per SET (user ${(cpu.user / 1e6).toFixed(2)} s, system ${(cpu.system / 1e6).toFixed(2)} s)`);
      return [
        { label: `client setMany, ${JOBS.toLocaleString('en')} SETs, 1 connection, memory, 1 worker`, value: rate, unit: 'SET/s', target: { op: '>=', value: 100_000 }, note: `${seconds.toFixed(2)} s; the ctl-import row's target` },
        { label: `client set() calls, ${JOBS.toLocaleString('en')}, 4096 at a time`, value: JOBS / callSeconds, unit: 'SET/s', note: `${callSeconds.toFixed(2)} s; client CPU ${((cpuCalls.user + cpuCalls.system) / JOBS).toFixed(2)} us per call` },
        { label: 'client CPU per SET (setMany; process.cpuUsage / count)', value: cpuUsPerSet, unit: 'us', digits: 2, note: `user ${(cpu.user / 1e6).toFixed(2)} s + system ${(cpu.system / 1e6).toFixed(2)} s for ${JOBS.toLocaleString('en')} SETs` },
      ];
    } finally {
      await client.close();
    }
  }),
};
