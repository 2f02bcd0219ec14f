// applyRecord, the one way a replayed record reaches the stores: each kind does its one thing,
// and a format mark (it is about the log, not its contents) touches nothing.
import { expect } from 'chai';
import { applyRecord, type LogRecord } from '../../../lib/engine/journal.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { RuleStore } from '../../../lib/store/rules.ts';

describe('engine/journal applyRecord', () => {
  it('puts and deletes jobs and rules; a format mark changes no store', () => {
    const jobs = new JobStore();
    const rules = new RuleStore();
    const records: LogRecord[] = [
      { t: 'format', version: 2 },
      { t: 'job', job: { id: 'a', execution: 1n, status: 'planned' } },
      { t: 'job', job: { id: 'b', execution: 2n, status: 'planned' } },
      { t: 'rule', rule: { id: 'r', pattern: 'a', runner: { type: 'shell', command: 'true' } } },
      { t: 'job.removed', id: 'b' },
      { t: 'format', version: 2 },
    ];
    for (const rec of records) applyRecord(jobs, rules, rec);
    expect([jobs.size, rules.size]).to.deep.equal([1, 1]);
    expect(jobs.get('a')).to.deep.include({ id: 'a', execution: 1n });
    applyRecord(jobs, rules, { t: 'rule.removed', id: 'r' });
    applyRecord(jobs, rules, { t: 'format', version: 2 });
    expect([jobs.size, rules.size]).to.deep.equal([1, 0]);
  });
});
