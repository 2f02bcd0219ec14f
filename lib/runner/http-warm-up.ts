// POSTs through the http runner to a server of the runner child's own, on loopback, as the
// child starts (lib/runner/run-by-kind.ts preloadRunners).
//
// Why: V8 compiles a function when it is first called. Without a warm-up, the first burst
// after a start paid for that between the child taking its first request and the POST
// leaving. One POST straight to runHttp left the pool's part and the spare connection's
// handover uncompiled: that step took 1.2-3.6 ms in a daemon's first burst (0.3 ms in any
// later one). So the warm-up takes the path a job takes: through a runner pool (a scratch
// one, whose reports go nowhere), with requests shaped as the IPC channel delivers them
// (structured clones), each on a spare connection (http-preconnect.ts) as the lookahead has
// one ready; with 3 rounds that step took 0.8-1.2 ms in 3 runs of 4. More rounds were worse:
// 200 (enough for V8 to optimize the path for the warm-up's pattern) cost the first burst
// 15-20% of its completion rate and left the step at 3.6-4.7 ms in 3 runs of 4. The server
// listens on 127.0.0.1, port 0, and closes each connection after its answer, so that every
// round finds no idle connection and opens a spare. The rounds log nothing; one debug line
// sums them up.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import { silentLogger } from '../log.ts';
import type { Execution, RunnerContext } from './execution.ts';
import { prepareHttp } from './http.ts';
import { RunnerPool } from './pool.ts';

/** Rounds of the warm-up: each function of the path runs; more cost more than they gave. */
export const WARM_UP_ROUNDS = 3;
/** How long a round waits for its spare to reach the server before going on without. */
const SPARE_WAIT_MS = 100;

/** Resolves once the exchanges are over, whatever their outcome; never rejects. */
export async function warmUpHttp(ctx: RunnerContext, rounds = WARM_UP_ROUNDS): Promise<void> {
  const started = performance.now();
  const accepted: Array<() => void> = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204, { connection: 'close' }).end());
  });
  server.on('connection', () => accepted.shift()?.());
  let ok = 0;
  let spares = 0;
  let round = 0;
  try {
    await listen(server);
    const { port } = server.address() as AddressInfo;
    const spec = structuredClone<Extract<RunnerSpec, { type: 'http' }>>({ type: 'http', method: 'POST', url: `http://127.0.0.1:${port}/warm-up` });
    const quiet: RunnerContext = { ...ctx, log: silentLogger() };
    let done: (success: boolean) => void = () => {};
    const pool = new RunnerPool({ maxInflight: 1, ctx: quiet, onResult: (_exec, success) => done(success) });
    for (; round < rounds; round++) {
      if (await spareAccepted(accepted, () => prepareHttp(spec, quiet))) spares++;
      const finished = new Promise<boolean>((resolve) => { done = resolve; });
      pool.submit(structuredClone<Execution>({ attempt: '0'.repeat(32), jobId: 'tickd.warm-up', execution: 0n, runner: spec, rule: 'tickd.warm-up' }));
      if (await finished) ok++;
    }
  } catch (err) {
    ctx.log.debug({ err: (err as Error)?.message }, 'http runner warm-up failed');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  ctx.log.debug({ rounds: round, ok, spares, ms: Math.round(performance.now() - started) }, 'http runner warmed up');
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
