// HTTP throughput benchmark (run: node bench/http.ts [--seconds S] [--connections C] [--workers W]).
// Starts the real bin/tickd in memory mode with the HTTP interface on an ephemeral port (the
// test harness's Daemon: waits for the "ready" log line), then C keep-alive connections each
// send PUT /jobs/{id} back to back for S seconds. Prints requests/s and latency percentiles.
// The suite's row (`node bench/run.ts http-put`) runs the same measure with the defaults.
import { parseArgs } from 'node:util';
import { Daemon } from '../test/helpers/daemon.ts';
import { putThroughput } from './lib/http-put.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    workers: { type: 'string', default: '1' },
  },
});
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const WORKERS = Number(values.workers);

const daemon = await Daemon.start({
  workers: WORKERS,
  // Log level stays info: the harness waits for the "ready" line.
  config: { http: { listen: '127.0.0.1:0' }, database: { persistence: 'memory' } },
}).catch((err: Error) => { console.error(err.message); process.exit(1); });
try {
  const r = await putThroughput(daemon.http!, CONNECTIONS, SECONDS);
  console.log(`PUT /jobs/{id}: ${r.requests} requests in ${r.seconds.toFixed(2)} s over ${CONNECTIONS} keep-alive connections, ${WORKERS} worker(s), memory mode`);
  console.log(`  ${r.perSecond.toFixed(0)} requests/s; latency p50 ${r.p50Us} us, p99 ${r.p99Us} us, max ${r.maxUs} us`);
} finally {
  await daemon.stop();
}
