// The runner child's loads of the network runners' modules: a kind's module is loaded once a
// rule uses it (the primary says which: cluster/ipc/runner-messages.ts), never for a kind no
// rule uses; the http runner's whole path is then compiled by a warm-up (http-warm-up.ts), so
// that neither a module load nor V8's first optimisation lands in the lateness of a burst's
// first jobs (run-by-kind.ts). The warm-up is imported late: it runs jobs through a pool of its own.
import type { NetworkKind } from '../domain/runner-spec.ts';
import type { RunnerContext } from './execution.ts';
import { loadRunnerModule } from './run-by-kind.ts';

/**
 * Starts loading the modules of `kinds` in the background (a failure shows at their first
 * job); `loaded` is called once all of them have settled.
 */
export function preloadRunners(ctx: RunnerContext, kinds: readonly NetworkKind[], loaded: () => void): void {
  const loads = kinds.map((kind) => loadRunnerModule(kind).then((fresh) => {
    if (!fresh) return;
    ctx.log.debug({ kind }, 'runner module loaded');
    if (kind === 'http') return import('./http-warm-up.ts').then((w) => w.warmUpHttp(ctx));
  }));
  void Promise.allSettled(loads).then(loaded);
}
