// POSTs through the http runner to a server of the runner child's own, on loopback, as the
// child starts (lib/runner/preload.ts).
//
// Why: V8 compiles a function when it is first called. Without a warm-up, the first burst
// after a start paid for that between the child taking its first request and the POST
// leaving. One POST straight to runHttp left the pool's part and the spare connection's
// handover uncompiled: that step took 1.2-3.6 ms in a daemon's first burst (0.3 ms in any
// later one). So the warm-up takes the path a job takes: through a runner pool (a scratch
// one, whose reports go nowhere), with requests shaped as the IPC channel delivers them
// (structured clones). First SPARE_ROUNDS, one after another, each on a spare connection
// (http-preconnect.ts) as the lookahead has one ready; the server closes each connection
// after its answer, so that every round finds no idle connection and opens a spare.
//
// Then STREAM_JOBS more, STREAM_WIDTH at a time, as jobs come when they come often. Why:
// V8 optimizes a function (Maglev) once it has run about 400 times, and every function of a
// job's path runs about once per job, so without these the whole path was optimized at once
// about 500 executions into the child's life: its compiler threads ran 50-60 ms within 400
// ms and every process of the machine stalled 5-8 ms at once (the lateness row's worst probe
// at the http sink, 100 000 pending, in 6 of 8 traced runs). The rounds take each shape of
// a burst and of a stream: a spare, kept-alive connections reused, new ones written to while
// they connect (each 4th round's answers close their connections). 600 POSTs on one kept-alive
// connection instead left the code specialized to that one: the first burst then
// deoptimized 37 functions of the write path in its first 10 ms (first POST at the sink
// 5.9-8.9 ms after T in 7 runs of 8, against 2.6-6.9 ms without); these rounds left 3. The
// rounds log nothing; one debug line sums them up. The server listens on 127.0.0.1, port 0.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import { silentLogger } from '../log.ts';
import type { Execution, RunnerContext } from './execution.ts';
import { prepareHttp } from './http.ts';
import { RunnerPool } from './pool.ts';

/** Rounds on a spare, one job each: each function of the path runs once or more. */
export const SPARE_ROUNDS = 3;
/** Jobs after those: past the ~400 calls after which V8 optimizes a function. */
export const STREAM_JOBS = 600;
/** Jobs at a time in those rounds, as the pool starts them in a burst. */
const STREAM_WIDTH = 8;
/** Every how many stream rounds the answers close their connections (and a spare opens). */
const RECONNECT_EVERY = 4;
/** How long a round waits for its spare to reach the server before going on without. */
const SPARE_WAIT_MS = 100;

/** Resolves once the exchanges are over, whatever their outcome; never rejects. */
export async function warmUpHttp(ctx: RunnerContext, spareRounds = SPARE_ROUNDS, streamJobs = STREAM_JOBS): Promise<void> {
  const started = performance.now();
  const accepted: Array<() => void> = [];
  let closing = true;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204, closing ? { connection: 'close' } : {}).end());
  });
  let connections = 0;
  server.on('connection', () => { connections++; accepted.shift()?.(); });
  let ok = 0;
  let spares = 0;
  let round = 0;
  let streamed = 0;
  try {
    await listen(server);
    const { port } = server.address() as AddressInfo;
    const spec = structuredClone<Extract<RunnerSpec, { type: 'http' }>>({ type: 'http', method: 'POST', url: `http://127.0.0.1:${port}/warm-up` });
    const quiet: RunnerContext = { ...ctx, log: silentLogger() };
    const waiting = new Map<string, (success: boolean) => void>();
    // onStart as the child's pool has one: a call site the warm-up leaves without feedback is
    // deoptimized by the first real job.
    const pool = new RunnerPool({ maxInflight: STREAM_WIDTH, ctx: quiet, onStart: () => {}, onResult: (exec, success) => waiting.get(exec.attempt)?.(success) });
    let serial = 0;
    const post = async (): Promise<void> => {
      const attempt = (serial++).toString(16).padStart(32, '0');
      const finished = new Promise<boolean>((resolve) => waiting.set(attempt, resolve));
      pool.submit(structuredClone<Execution>({ attempt, jobId: 'tickd.warm-up', execution: 0n, runner: spec, rule: 'tickd.warm-up' }));
      if (await finished) ok++;
      waiting.delete(attempt);
    };
    for (; round < spareRounds; round++) {
      if (await spareAccepted(accepted, () => prepareHttp(spec, quiet))) spares++;
      await post();
    }
    for (let r = 0; streamed < streamJobs; r++) {
      closing = r % RECONNECT_EVERY === RECONNECT_EVERY - 1;
      if (r % RECONNECT_EVERY === 0 && await spareAccepted(accepted, () => prepareHttp(spec, quiet))) spares++;
      const width = Math.min(STREAM_WIDTH, streamJobs - streamed);
      await Promise.all(Array.from({ length: width }, post));
      streamed += width;
    }
  } catch (err) {
    ctx.log.debug({ err: (err as Error)?.message }, 'http runner warm-up failed');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  ctx.log.debug({ rounds: round, streamed, ok, spares, connections, ms: Math.round(performance.now() - started) }, 'http runner warmed up');
}

function listen(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
}

/**
 * Opens a spare and waits until the server accepted it (true), or SPARE_WAIT_MS (false: no
 * spare was made, the agent held an idle connection); the request then takes its own.
 */
function spareAccepted(accepted: Array<() => void>, open: () => void): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const onAccept = (): void => { clearTimeout(timer); resolve(true); };
    const timer = setTimeout(() => {
      accepted.splice(accepted.indexOf(onAccept), 1);
      resolve(false);
    }, SPARE_WAIT_MS);
    accepted.push(onAccept);
    open();
  });
}
