// HTTP throughput: C keep-alive connections each send PUT /jobs/{id} back to back for S
// seconds (after a 0.5 s warm-up out of the measured window); requests/s and latency
// percentiles. Any answer but 200 stops the run: refused requests are not throughput.
import { Agent, request } from 'node:http';
import type { Address } from '../../test/helpers/daemon.ts';
import { spread } from './stats.ts';

export interface PutThroughput {
  readonly requests: number;
  readonly seconds: number;
  readonly perSecond: number;
  /** Per-request latency, µs. */
  readonly p50Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
}

const BODY = '{"execution":"2099-01-01T00:00:00.123456789Z"}';

function put(addr: Address, agent: Agent, id: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: addr.host, port: addr.port, agent, method: 'PUT', path: `/jobs/${id}`,
      headers: { 'content-type': 'application/json', 'content-length': String(BODY.length) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(BODY);
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

export async function putThroughput(addr: Address, connections: number, seconds: number): Promise<PutThroughput> {
  await Promise.all(Array.from({ length: connections }, (_, i) => connection(addr, 1000 + i, Date.now() + 500, [])));
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const counts = await Promise.all(Array.from({ length: connections }, (_, i) => connection(addr, i, Date.now() + seconds * 1000, latencies)));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const requests = counts.reduce((a, b) => a + b, 0);
  const s = spread(latencies);
  return { requests, seconds: elapsed, perSecond: requests / elapsed, p50Us: s.p50, p99Us: s.p99, maxUs: s.max };
}
