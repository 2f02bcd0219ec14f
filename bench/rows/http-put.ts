// Row 9: HTTP PUT /jobs/{id} requests/s over 32 keep-alive connections, memory mode, one
// worker (the same measure as bench/http.ts with its defaults).
import { withDaemon } from '../lib/harness.ts';
import { putThroughput } from '../lib/http-put.ts';
import type { Row } from '../lib/suite.ts';

const CONNECTIONS = 32;
const SECONDS = 5;

export const row: Row = {
  name: 'http-put',
  title: 'HTTP PUT /jobs/{id} requests/s, 32 keep-alive connections, memory mode',
  run: (opts) => withDaemon('http-put', {
    workers: 1,
    config: { http: { listen: '127.0.0.1:0' }, database: { persistence: 'memory' } },
  }, async (daemon) => {
    if (daemon.http === null) throw new Error('the daemon reported no HTTP address');
    const r = await putThroughput(daemon.http, CONNECTIONS, SECONDS);
    opts.progress(`  ${r.requests} requests in ${r.seconds.toFixed(2)} s`);
    return [{
      label: `HTTP PUT /jobs/{id} req/s, ${CONNECTIONS} keep-alive conn, memory, 1 worker`,
      value: r.perSecond,
      unit: 'req/s',
      note: `latency p50 ${(r.p50Us / 1000).toFixed(2)} ms, p99 ${(r.p99Us / 1000).toFixed(2)} ms, max ${(r.maxUs / 1000).toFixed(2)} ms`,
    }];
  }),
};
