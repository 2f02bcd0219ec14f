// The runner child's start: the network runners' modules are loaded once it serves, then the
// http runner's whole path is compiled by a warm-up (http-warm-up.ts), so that neither a
// module load nor V8's first optimisation lands in the lateness of a burst's first jobs
// (run-by-kind.ts). The warm-up is imported late: it runs jobs through a pool of its own.
import type { RunnerContext } from './execution.ts';
import { loadRunnerModule } from './run-by-kind.ts';

/** Starts loading the network runners in the background (a failure shows at their first job). */
export function preloadRunners(ctx: RunnerContext): void {
  for (const kind of ['amqp', 'redis'] as const) loadRunnerModule(kind).catch(() => {});
  loadRunnerModule('http').then(() => import('./http-warm-up.ts')).then((w) => w.warmUpHttp(ctx)).catch(() => {});
}
