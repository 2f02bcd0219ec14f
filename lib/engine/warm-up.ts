// The firing path run on a scratch engine as the primary starts (cluster/primary.ts).
//
// Why: V8 compiles a function when it is first called and runs it slowly until it has been
// called often. A daemon's first burst otherwise took 1.2-1.9 ms from the tick to handing the
// first execution over (0.4 ms in every later burst), all of it before the first job could
// start. Here the same code (the job and rule stores, the matcher, the slices of
// lib/engine/firing.ts, the SET path) runs a few thousand times on stores of its own, in
// memory mode, dispatching to nothing. Nothing of it is kept, logged, counted or persisted.
import type { StatValues } from '../domain/stat.ts';
import { JobStore } from '../store/jobs.ts';
import { RuleStore } from '../store/rules.ts';
import { Engine } from './engine.ts';

/** Jobs of the scratch burst: a few slices' worth, enough for V8 to optimize the path. */
export const WARM_UP_JOBS = 4096;

/** Runs the warm-up; returns how many scratch jobs were dispatched (tests). */
export function warmUpFiring(count = WARM_UP_JOBS): number {
  let dispatched = 0;
  const engine = new Engine({
    jobs: new JobStore(),
    rules: new RuleStore(),
    journal: null,
    dispatch: () => { dispatched++; },
    stat: () => ({}) as StatValues,
    onPersistError: () => {},
  });
  // An http rule: the runner whose jobs the first-POST figure is about (any kind takes this path).
  engine.execute({ op: 'rule.set', rule: { id: 'warm-up', pattern: 'warm-up.', runner: { type: 'http', method: 'POST', url: 'http://127.0.0.1/' } } });
  for (let i = 0; i < count; i++) engine.execute({ op: 'job.set', id: `warm-up.${i}`, execution: 1n });
  while (engine.tick(2n));
  return dispatched;
}
