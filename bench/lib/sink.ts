// An HTTP sink in the bench process for the daemon's http runner: answers 204 to everything,
// counts requests, and (for lateness) records each request's arrival wall time against the
// job's due time read from the body `{"job_id":"<id>","execution":<ns>}`. The execution is
// parsed from the digits into a bigint, never through JSON.parse (it rounds above 2^53).
// Arrival is taken when the request headers are parsed, before the body is read.
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { wallMs } from './harness.ts';

export interface Arrival {
  readonly jobId: string;
  readonly executionNs: bigint;
  readonly arrivalMs: number;
}

const EXECUTION = /"execution":(-?\d+)/;
const JOB_ID = /"job_id":"([^"]*)"/;
// 4 requests a round: 1 000 in all, past the ~400 calls after which V8 optimizes a function
// (Maglev). With 400, the sink's own path was compiled during the lateness row's first round.
const WARM_UP_ROUNDS = 250;

export class HttpSink {
  readonly arrivals: Arrival[] = [];
  received = 0;
  /** The status of the n-th request counted (1-based): 204 unless a row fails some (the retries row). */
  statusOf: (n: number) => number = () => 204;
  /** Bodies that did not carry a job id and an execution. */
  malformed = 0;
  private readonly server: Server;
  private waiters: Array<() => void> = [];

  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<HttpSink> {
    const server = createServer();
    const sink = new HttpSink(server);
    server.on('request', (req, res) => {
      const arrivalMs = wallMs();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(sink.statusOf(sink.received + 1)).end();
        const body = Buffer.concat(chunks).toString('utf8');
        const exec = EXECUTION.exec(body);
        const id = JOB_ID.exec(body);
        if (exec === null || id === null) sink.malformed++;
        else sink.arrivals.push({ jobId: id[1]!, executionNs: BigInt(exec[1]!), arrivalMs });
        sink.received++;
        const w = sink.waiters;
        sink.waiters = [];
        for (const f of w) f();
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await sink.warmUp();
    return sink;
  }

  /**
   * Requests of the bench's own, not counted, so that the first POST a row measures does not
   * also pay for this process compiling its HTTP server path (it did: 1.5-3.8 ms at the sink
   * for a daemon's first POST, 0.1-0.3 ms later). The sink is the instrument; its first-run
   * cost is not the daemon's. They take the whole path a job's request takes, recorded and
   * counted, and are forgotten after.
   */
  private async warmUp(): Promise<void> {
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const body = '{"job_id":"bench.warm-up","execution":0}';
    const one = (): Promise<void> => new Promise((resolve, reject) => {
      const req = request(this.url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
    try {
      for (let round = 0; round < WARM_UP_ROUNDS; round++) await Promise.all([one(), one(), one(), one()]);
    } finally {
      agent.destroy();
    }
    this.arrivals.length = 0;
    this.received = 0;
    this.malformed = 0;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once `n` requests arrived; false if `timeoutMs` passed first. */
  async waitFor(n: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.received < n) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
    return true;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Lateness of one arrival in ms: arrival wall time minus the job's execution time. */
export function latenessMs(a: Arrival): number {
  // Split the ns into whole ms (exact as a double up to 2^53 ms) and the sub-ms rest.
  const wholeMs = a.executionNs / 1_000_000n;
  const restNs = a.executionNs - wholeMs * 1_000_000n;
  return (a.arrivalMs - Number(wholeMs)) - Number(restNs) / 1e6;
}
