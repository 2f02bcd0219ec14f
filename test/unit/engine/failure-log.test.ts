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
  let t = 0; // the monotonic clock failureLog reads, moved by hand: a busy event loop runs no timer
  const now = (): number => t;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    t = 0;
  });
  afterEach(() => clock.restore());
  const pass = (ms: number): void => {
    t += ms;
    clock.tick(ms);
  };
  const summaries = <R extends { msg: string }>(records: R[]): R[] => records.filter((r) => r.msg === 'jobs failed without a record of their own');

  it('logs each failed job, none of the successes', () => {
    const { log, records } = capture();
    const o = failureLog(log, now);
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
    const o = failureLog(log, now);
    const n = FAILURES_LOGGED_PER_SECOND + 250;
    for (let i = 0; i < n; i++) o.finished(`j${i}`, false, FAILED);
    expect(records).to.have.length(FAILURES_LOGGED_PER_SECOND);
    pass(1000);
    expect(records).to.have.length(FAILURES_LOGGED_PER_SECOND + 1);
    expect(records.at(-1)).to.deep.equal({ msg: 'jobs failed without a record of their own', fields: { jobs: 250, last_job: `j${n - 1}`, window_ms: 1000 } });
    o.finished('later', false, FAILED); // a new second logs one by one again
    expect(records.at(-1)!.fields['job']).to.equal('later');
  });

  it('a failure after the second ended tells its count first, and its timer then tells nothing early', () => {
    const { log, records } = capture();
    const o = failureLog(log, now);
    for (let i = 0; i < FAILURES_LOGGED_PER_SECOND + 3; i++) o.finished(`j${i}`, false, FAILED);
    clock.tick(500); // timers ran up to here
    t += 1000; // then the loop was busy past the end of the second: its timer has not run
    o.finished('next', false, FAILED);
    expect(records.slice(-2).map((r) => r.msg)).to.deep.equal(['jobs failed without a record of their own', 'job failed']);
    expect(records.at(-2)!.fields['jobs']).to.equal(3);
    for (let i = 0; i < FAILURES_LOGGED_PER_SECOND; i++) o.finished(`k${i}`, false, FAILED); // 99 logged, 1 counted
    clock.tick(600); // the first second's timer was due here
    expect(summaries(records), 'no count of the open second before it ends').to.have.length(1);
    pass(1000);
    expect(summaries(records).map((r) => r.fields['jobs'])).to.deep.equal([3, 1]);
  });

  it('a wall clock set back changes nothing: the second is the monotonic clock\'s', () => {
    const { log, records } = capture();
    const o = failureLog(log, now);
    o.finished('a', false, FAILED);
    clock.setSystemTime(Date.now() - 3_600_000);
    pass(1000);
    for (let i = 0; i < 10; i++) o.finished(`b${i}`, false, FAILED);
    expect(records.filter((r) => r.msg === 'job failed')).to.have.length(11);
  });

  it('flush() tells the count of the open second at once (a stop)', () => {
    const { log, records } = capture();
    const o = failureLog(log, now);
    for (let i = 0; i < FAILURES_LOGGED_PER_SECOND + 5; i++) o.finished(`j${i}`, false, FAILED);
    o.flush();
    expect(summaries(records)).to.have.length(1);
    pass(2000);
    expect(summaries(records), 'nothing told twice').to.have.length(1);
  });
});
