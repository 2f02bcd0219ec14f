// The client's readers of reply lines and writers of request arguments (lib/client/replies.ts,
// rules.ts, schedules.ts): what the daemon writes reads back into typed values, anything else
// is null (so a line that is not that answer never reads as one).
import { expect } from 'chai';
import { parseAnswer, parseAttemptLine, parseJobLine, parseStatLine } from '../../../lib/client/replies.ts';
import { parseRuleLine, ruleSetArgs } from '../../../lib/client/rules.ts';
import { scheduleSetArgs } from '../../../lib/client/schedules.ts';

describe('client replies and arguments', () => {
  it('answers: OK, OK body, ERROR code message; anything else null', () => {
    expect(parseAnswer('OK')).to.deep.equal({ ok: true, body: '' });
    expect(parseAnswer('OK planned 5')).to.deep.equal({ ok: true, body: 'planned 5' });
    expect(parseAnswer('ERROR not_found job "x" does not exist')).to.deep.equal({ ok: false, code: 'not_found', message: 'job "x" does not exist' });
    expect(parseAnswer('ERROR internal')).to.deep.equal({ ok: false, code: 'internal', message: '' });
    expect(parseAnswer('OKAY')).to.equal(null);
  });

  it('job, attempt and stat lines', () => {
    expect(parseJobLine('OK planned -5')).to.deep.equal({ id: 'OK', status: 'planned', execution: -5n });
    expect(parseJobLine('a running 5')).to.equal(null);
    expect(parseJobLine('a planned 5.5')).to.equal(null);
    expect(parseAttemptLine('2 10 1 0 30 failure "exit status 3"')).to.deep.equal({
      attempt: 2, startedNs: 10n, latenessNs: 1n, heldNs: 0n, durationNs: 30n, success: false, summary: 'exit status 3',
    });
    expect(parseAttemptLine('0 10 1 0 30 failure x')).to.equal(null);
    expect(parseStatLine('persistence memory')).to.deep.equal(['persistence', 'memory']);
    expect(parseStatLine('lonely')).to.equal(null);
  });

  it('rules: the arguments written read back as the same rule, options included', () => {
    const args = ruleSetArgs({ id: 'r', pattern: '', runner: { type: 'direct', executable: '/bin/echo', args: ['a b', '"q"'] }, retry: { attempts: 2, delay: 1_000_000_000n, jitter: 0.5 }, concurrency: 3, rate: { limit: 5, per: '1m' } });
    expect(args).to.equal('r "" retry.attempts=2 retry.delay=1s retry.jitter=0.5 concurrency=3 rate.limit=5 rate.per=1m direct /bin/echo "a b" "\\"q\\""');
    const rule = parseRuleLine(args);
    expect(rule).to.deep.include({ id: 'r', pattern: '', runner: { type: 'direct', executable: '/bin/echo', args: ['a b', '"q"'] }, concurrency: 3, rate: { limit: 5, per: 60_000_000_000n } });
    expect(rule?.retry).to.include({ attempts: 2, delay: 1_000_000_000n, jitter: 0.5 });
    expect(parseRuleLine('r p shell a b')).to.equal(null); // shell takes one argument
    expect(parseRuleLine('r p bogus=1 shell a')).to.equal(null);
    expect(parseRuleLine('r p awf wf --input k=v')?.runner).to.deep.equal({ type: 'awf', workflow: 'wf', inputs: ['k=v'] });
    expect(parseRuleLine('r p awf wf --input')).to.equal(null);
    expect(parseRuleLine('r p redis redis://h GET k')).to.equal(null);
  });

  it('schedules: one quoted key=value per field, times as nanoseconds, durations as text', () => {
    expect(scheduleSetArgs('s', { cron: '30 2 * * *', tz: 'Europe/Berlin', start: new Date('2030-01-01T00:00:00Z'), every: undefined, jitter: 30_000_000_000n, paused: true }))
      .to.equal('s "cron=30 2 * * *" tz=Europe/Berlin start=1893456000000000000 jitter=30s paused=true');
    expect(() => scheduleSetArgs('s', { colour: 'red' } as never)).to.throw(TypeError, /unknown schedule field "colour"/);
  });
});
