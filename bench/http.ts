// HTTP throughput benchmark (run: node bench/http.ts [--seconds S] [--connections C] [--workers W]).
// Starts the real bin/tickd in memory mode with the HTTP interface on an ephemeral port (the
// test harness's Daemon: waits for the "ready" log line), then C keep-alive connections each
// send PUT /jobs/{id} back to back for S seconds. Prints requests/s and latency percentiles.
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { Daemon, type Address } from '../test/helpers/daemon.ts';

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

function put(addr: Address, agent: Agent, id: string): Promise<number> {
  const body = '{"execution":"2099-01-01T00:00:00.123456789Z"}';
  return new Promise((resolve, reject) => {
    const req = request({
      host: addr.host, port: addr.port, agent, method: 'PUT', path: `/jobs/${id}`,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function connection(addr: Address, index: number, deadline: number, latenciesUs: number[]): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let n = 0;
  try {
    while (Date.now() < deadline) {
      const t0 = process.hrtime.bigint();
      const status = await put(addr, agent, `bench.c${index}.${n}`);
      if (status !== 200) throw new Error(`PUT answered ${status}`);
      latenciesUs.push(Number((process.hrtime.bigint() - t0) / 1000n));
      n++;
    }
  } finally {
    agent.destroy();
  }
  return n;
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

const daemon = await Daemon.start({
  workers: WORKERS,
  // Log level stays info: the harness waits for the "ready" line.
  config: { http: { listen: '127.0.0.1:0' }, database: { persistence: 'memory' } },
}).catch((err: Error) => { console.error(err.message); process.exit(1); });
try {
  const addr = daemon.http!;
  // Warm-up: JIT and connection setup out of the measured window.
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => connection(addr, 1000 + i, Date.now() + 500, [])));
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const counts = await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => connection(addr, i, Date.now() + SECONDS * 1000, latencies)));
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  const total = counts.reduce((a, b) => a + b, 0);
  latencies.sort((a, b) => a - b);
  console.log(`PUT /jobs/{id}: ${total} requests in ${elapsedS.toFixed(2)} s over ${CONNECTIONS} keep-alive connections, ${WORKERS} worker(s), memory mode`);
  console.log(`  ${(total / elapsedS).toFixed(0)} requests/s; latency p50 ${percentile(latencies, 0.5)} us, p99 ${percentile(latencies, 0.99)} us, max ${latencies.at(-1)} us`);
} finally {
  await daemon.stop();
}
