// The warning of failed jobs (lib/engine/observers.ts failureLog): one record per failed job
// up to FAILURES_LOGGED_PER_SECOND in a second, then one record counting the others.
import { expect } from 'chai';
import sinon from 'sinon';
import type { Attempt } from '../../../lib/domain/attempt.ts';
import type { Logger } from '../../../lib/log.ts';
import { FAILURES_LOGGED_PER_SECOND, failureLog } from '../../../lib/engine/observers.ts';

const FAILED: Attempt = { rule: 'r', runner: 'http', startedNs: 1n, latenessNs: 0n, durationNs: 1n, outcome: { kind: 'http_response', status: 503 } };

function capture(): { log: Logger; records: Array<{ fields: Record<string, unknown>; msg: string }> } {
  const records: Array<{ fields: Record<string, unknown>; msg: string }> = [];
  const log = { warn: (fields: Record<string, unknown>, msg: string) => { records.push({ fields, msg }); } } as unknown as Logger;
  return { log, records };
}

describe('engine: the warning of failed jobs', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => { clock = sinon.useFakeTimers({ now: 1_000_000 }); });
  afterEach(() => clock.restore());

  it('logs each failed job, none of the successes', () => {
    const { log, records } = capture();
    const o = failureLog(log);
    o.finished('a', false, FAILED);
    o.finished('b', true, undefined);
    o.finished('c', false, undefined);
    expect(records.map((r) => [r.msg, r.fields['job'], r.fields['outcome']])).to.deep.equal([
      ['job failed', 'a', 'HTTP status 503'],
      ['job failed', 'c', 'failed'],
    ]);
  });

  it('past the limit in one second, counts the rest in one record at the end of that second', () => {
    const { log, records } = capture();
    const o = failureLog(log);
    const n = FAILURES_LOGGED_PER_SECOND + 250;
    for (let i = 0; i < n; i++) o.finished(`j${i}`, false, FAILED);
    expect(records).to.have.length(FAILURES_LOGGED_PER_SECOND);
    clock.tick(1000);
    expect(records).to.have.length(FAILURES_LOGGED_PER_SECOND + 1);
    expect(records.at(-1)).to.deep.equal({ msg: 'jobs failed without a record of their own', fields: { jobs: 250, last_job: `j${n - 1}`, window_ms: 1000 } });
    // A new second logs one by one again.
    o.finished('later', false, FAILED);
    expect(records.at(-1)!.fields['job']).to.equal('later');
  });

  it('a failure in the next second tells the count of the last one first, even before its timer ran', () => {
    const { log, records } = capture();
    const o = failureLog(log);
    for (let i = 0; i < FAILURES_LOGGED_PER_SECOND + 3; i++) o.finished(`j${i}`, false, FAILED);
    clock.setSystemTime(Date.now() + 1500); // the wall clock moves; the timer has not fired
    o.finished('next', false, FAILED);
    expect(records.slice(-2).map((r) => r.msg)).to.deep.equal(['jobs failed without a record of their own', 'job failed']);
    expect(records.at(-2)!.fields['jobs']).to.equal(3);
    clock.tick(2000);
    expect(records.filter((r) => r.msg !== 'job failed'), 'no second count of the same jobs').to.have.length(1);
  });
});
