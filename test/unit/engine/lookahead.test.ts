// The engine's lookahead (lib/engine/lookahead.ts): the next due job's http runner is
// announced once, ahead of its due time, so that the runner child can open its connection.
import { expect } from 'chai';
import type { RunnerSpec } from '../../../lib/domain/runner-spec.ts';
import type { StatValues } from '../../../lib/domain/stat.ts';
import { Engine } from '../../../lib/engine/engine.ts';
import { AWAKE_SPACING_NS, CHECK_EVERY_NS, LOOKAHEAD_NS } from '../../../lib/engine/lookahead.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { RuleStore } from '../../../lib/store/rules.ts';

const MS = 1_000_000n;
const HOOK: RunnerSpec = { type: 'http', method: 'POST', url: 'http://127.0.0.1:9/hook' };
const OTHER: RunnerSpec = { type: 'http', method: 'POST', url: 'http://127.0.0.1:10/other' };

function engineWithRules() {
  const prepared: RunnerSpec[] = [];
  const dueTimes: Array<bigint | null> = [];
  const dispatched: string[] = [];
  const engine = new Engine({
    jobs: new JobStore(), rules: new RuleStore(), journal: null,
    dispatch: (job) => dispatched.push(job.id),
    prepare: (runner, dueNs) => { prepared.push(runner); dueTimes.push(dueNs); },
    stat: () => ({}) as StatValues,
    onPersistError: () => {},
  });
  engine.execute({ op: 'rule.set', rule: { id: 'hook', pattern: 'hook.', runner: HOOK } });
  engine.execute({ op: 'rule.set', rule: { id: 'other', pattern: 'other.', runner: OTHER } });
  engine.execute({ op: 'rule.set', rule: { id: 'sh', pattern: 'sh.', runner: { type: 'shell', command: 'true' } } });
  return { engine, prepared, dueTimes, dispatched };
}

describe('scheduler: lookahead for the next due job', () => {
  it('announces the next due job\'s http runner and due time once it is due within the lookahead, and only once', () => {
    const { engine, prepared, dueTimes } = engineWithRules();
    const due = 10_000n * MS;
    engine.execute({ op: 'job.set', id: 'hook.1', execution: due });
    engine.tick(due - LOOKAHEAD_NS - 50n * MS);
    expect(prepared, 'not due within the lookahead yet').to.deep.equal([]);
    engine.tick(due - LOOKAHEAD_NS + 60n * MS);
    expect(prepared).to.have.length(1);
    expect(prepared[0]).to.deep.equal(HOOK);
    expect(dueTimes, 'with the job\'s due time: the runner child is awake then').to.deep.equal([due]);
    for (let t = due - LOOKAHEAD_NS + 200n * MS; t < due; t += CHECK_EVERY_NS) engine.tick(t);
    expect(prepared, 'the same runner is not announced again within the lookahead').to.have.length(1);
  });

  it('passes a due time within AWAKE_SPACING_NS of the last one passed as null: another rule\'s runner is announced, no wake-up', () => {
    const { engine, prepared, dueTimes } = engineWithRules();
    const due = 20_000n * MS;
    engine.execute({ op: 'job.set', id: 'hook.1', execution: due });
    engine.execute({ op: 'job.set', id: 'other.1', execution: due + 300n * MS });
    engine.execute({ op: 'job.set', id: 'hook.2', execution: due + AWAKE_SPACING_NS + 400n * MS });
    engine.tick(due - 500n * MS); // hook.1 announced with its due time
    engine.tick(due); // hook.1 fires; other.1 is next: its runner is announced, 300 ms after the last due time
    engine.tick(due + 300n * MS); // other.1 fires; hook.2, next, is not within the lookahead yet
    engine.tick(due + 500n * MS); // now it is: 1.4 s after the last due time passed
    expect(prepared).to.deep.equal([HOOK, OTHER, HOOK]);
    expect(dueTimes).to.deep.equal([due, null, due + AWAKE_SPACING_NS + 400n * MS]);
  });

  it('announces the same runner again after the wall clock was set back', () => {
    const { engine, prepared } = engineWithRules();
    const now = 30_000n * MS;
    engine.execute({ op: 'job.set', id: 'hook.1', execution: now + 500n * MS });
    engine.tick(now);
    expect(prepared).to.have.length(1);
    const back = now - 3_600_000n * MS;
    engine.execute({ op: 'job.set', id: 'hook.2', execution: back + 500n * MS });
    engine.tick(back);
    expect(prepared, 'an hour back, the job due next is announced').to.have.length(2);
  });

  it('looks at most once per check period, and then at the job that is due first', () => {
    const { engine, prepared } = engineWithRules();
    const now = 50_000n * MS;
    engine.tick(now); // nothing armed: the check is spent
    engine.execute({ op: 'job.set', id: 'other.1', execution: now + 300n * MS });
    engine.execute({ op: 'job.set', id: 'hook.1', execution: now + 200n * MS });
    engine.tick(now + CHECK_EVERY_NS / 2n);
    expect(prepared, 'within the period of the last look').to.deep.equal([]);
    engine.tick(now + CHECK_EVERY_NS);
    expect(prepared).to.deep.equal([HOOK]);
  });

  it('announces nothing for a job no rule matches or whose runner is not http', () => {
    const { engine, prepared } = engineWithRules();
    const now = 90_000n * MS;
    engine.execute({ op: 'job.set', id: 'sh.1', execution: now + 500n * MS });
    engine.tick(now);
    engine.execute({ op: 'job.set', id: 'nobody.1', execution: now + 400n * MS });
    engine.tick(now + CHECK_EVERY_NS);
    expect(prepared).to.deep.equal([]);
  });

  it('is not consulted while a burst is being fired, and looks once the burst is done', () => {
    const { engine, prepared, dispatched } = engineWithRules();
    const now = 70_000n * MS;
    // The burst's own jobs are http jobs: a look between slices would announce their runner.
    for (let i = 0; i < 2000; i++) engine.execute({ op: 'job.set', id: `hook.${i}`, execution: now });
    engine.execute({ op: 'job.set', id: 'other.next', execution: now + 500n * MS });
    let slices = 0;
    while (engine.tick(now)) {
      slices++;
      expect(prepared, 'no announcement between the slices of a burst').to.deep.equal([]);
    }
    expect(slices).to.be.greaterThan(1);
    expect(dispatched).to.have.length(2000);
    expect(prepared, 'the tick that ends the burst looks ahead').to.deep.equal([OTHER]);
  });
});
