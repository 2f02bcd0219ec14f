// One POST through the http runner to a server of the runner child's own, on loopback, as the
// child starts (lib/runner/run-by-kind.ts preloadRunners).
//
// Why: V8 compiles a function when it is first called. Without this, the first burst after a
// start paid for compiling Node's HTTP client path (request, agent, connect, the response
// parser) on its first request, between the child taking it and the POST leaving. The
// server listens on 127.0.0.1, port 0, for that one exchange only.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import type { RunnerContext } from './execution.ts';
import { runHttp } from './http.ts';

/** Resolves once the exchange is over, whatever its outcome; never rejects. */
export async function warmUpHttp(ctx: RunnerContext): Promise<void> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const spec: Extract<RunnerSpec, { type: 'http' }> = { type: 'http', method: 'POST', url: `http://127.0.0.1:${port}/warm-up` };
    const exec = { attempt: '0'.repeat(32), jobId: 'tickd.warm-up', execution: 0n, runner: spec };
    await runHttp(exec, spec, ctx, new AbortController().signal);
  } catch (err) {
    ctx.log.debug({ err: (err as Error)?.message }, 'http runner warm-up failed');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
