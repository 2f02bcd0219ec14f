// Where records live on a cluster's stream (lib/jetstream/subjects.ts) and what a subject
// names back (restore.ts identifierOf): jobs, rules and schedules in trees of their own, so
// one identifier used by all three is three subjects; a token tickd would never write, an
// unknown tree or a subject of another stream names nothing.
import { expect } from 'chai';
import { clusterSubjects } from '../../../lib/jetstream/subjects.ts';
import { identifierOf } from '../../../lib/jetstream/restore.ts';
import type { ScheduleState } from '../../../lib/domain/schedule.ts';

const subjects = clusterSubjects('prod');
const STATE: ScheduleState = {
  schedule: { id: 'a.b_c', cron: null, every: 1_000_000_000n, tz: 'UTC', start: null, end: null, limit: null, jitter: 0n, missed: 'once', catchup: 1n, overlap: 'allow', paused: false, keep: 10 },
  decided: 0n, next: null, fired: 0, skippedMissed: 0, skippedOverlap: 0, held: null, fires: [], manual: [], skips: [],
};

describe('jetstream/subjects', () => {
  it('puts a job, a rule and a schedule of one identifier on three subjects, a removal on its entry\'s', () => {
    const job = subjects.of({ t: 'job', job: { id: 'a.b_c', execution: 1n, status: 'planned' } });
    const rule = subjects.of({ t: 'rule.removed', id: 'a.b_c' });
    const schedule = subjects.of({ t: 'schedule', state: STATE });
    expect([job, rule, schedule]).to.deep.equal(['prod.j.a_db__c', 'prod.r.a_db__c', 'prod.s.a_db__c']);
    expect(subjects.of({ t: 'schedule.removed', id: 'a.b_c' })).to.equal(schedule);
  });

  it('names back the kind and identifier of each, and nothing for what tickd never writes', () => {
    expect(identifierOf(subjects, 'prod.s.a_db__c')).to.deep.equal({ kind: 'schedule', id: 'a.b_c' });
    expect(identifierOf(subjects, 'prod.j.a_db__c')).to.deep.equal({ kind: 'job', id: 'a.b_c' });
    expect(identifierOf(subjects, 'prod.r.x')).to.deep.equal({ kind: 'rule', id: 'x' });
    for (const stray of ['prod.q.x', 'prod.s', 'prod.s.', 'prod.s.x.y', 'prod.s.a_x', 'other.s.x', 'prod.f', 'prod.constructor.x', 'prod.__proto__.x']) {
      expect(identifierOf(subjects, stray), stray).to.equal(null);
    }
  });
});
