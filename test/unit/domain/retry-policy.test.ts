// A rule's retry policy (lib/domain/retry-policy.ts): the fields as HTTP and TCP give them,
// refusals naming the field, the delay before each next attempt (fixed, exponential, capped,
// jitter, Retry-After), and which outcomes are worth another attempt: by default, and as
// `on` (retry-on.ts) says.
import { expect } from 'chai';
import type { AttemptOutcome } from '../../../lib/domain/attempt.ts';
import { delayAfter, readRetry, retryAfterNs, worthRetrying, type RetryPolicy } from '../../../lib/domain/retry-policy.ts';
import { DEFAULT_RETRY_ON, readRetryOn, type RetryClass } from '../../../lib/domain/retry-on.ts';

const S = 1_000_000_000n;

function policy(fields: Record<string, unknown>): RetryPolicy {
  const r = readRetry(fields);
  if (!('policy' in r)) throw new Error(`${r.field}: ${r.error}`);
  return r.policy;
}

function refused(fields: Record<string, unknown>): string {
  const r = readRetry(fields);
  if ('policy' in r) throw new Error('accepted');
  return `${r.field}: ${r.error}`;
}

describe('domain/retry-policy', () => {
  it('fills in the defaults: exponential, factor 2, max_delay 1h, no jitter; HTTP values and TCP texts alike', () => {
    expect(policy({ attempts: 5, delay: '1s' })).to.deep.equal({ attempts: 5, backoff: 'exponential', delay: S, factor: 2, maxDelay: 3600n * S, jitter: 0 });
    expect(policy({ attempts: '5', delay: '1s', factor: '1.5', jitter: '0.2', max_delay: '5m' }))
      .to.deep.equal(policy({ attempts: 5, delay: '1s', factor: 1.5, jitter: 0.2, max_delay: '5m' }));
    expect(policy({ attempts: 1 })).to.include({ attempts: 1, delay: 0n });
    expect(policy({ attempts: 3, backoff: 'fixed', delay: '2h' })).to.include({ maxDelay: 2n * 3600n * S });
  });

  it('refuses what is wrong, naming the field', () => {
    expect(refused({ attempts: 0 })).to.match(/^retry\.attempts: must be an integer from 1/);
    expect(refused({ attempts: -1, delay: '1s' })).to.match(/^retry\.attempts: /);
    expect(refused({ attempts: 2.5, delay: '1s' })).to.match(/^retry\.attempts: /);
    expect(refused({ attempts: 3 })).to.equal('retry.delay: is required when attempts is more than 1');
    expect(refused({ attempts: 3, delay: 'soon' })).to.match(/^retry\.delay: not a duration/);
    expect(refused({ attempts: 3, delay: '1s', backoff: 'linear' })).to.equal('retry.backoff: must be fixed or exponential');
    expect(refused({ attempts: 3, delay: '1s', backoff: 'fixed', factor: 2 })).to.equal('retry.factor: applies to exponential backoff only');
    expect(refused({ attempts: 3, delay: '1s', factor: 0.5 })).to.match(/^retry\.factor: must be a number from 1/);
    expect(refused({ attempts: 3, delay: '1m', max_delay: '1s' })).to.match(/^retry\.max_delay: must be from delay/);
    expect(refused({ attempts: 3, delay: '1s', jitter: 1.5 })).to.match(/^retry\.jitter: must be a number from 0 to 1/);
    expect(refused({ attempts: 3, delay: '1s', tries: 4 })).to.match(/^retry\.tries: unknown field/);
  });

  it('exponential from 1 s: 1 s, 2 s, 4 s... capped by max_delay; none after the last attempt', () => {
    const p = policy({ attempts: 6, delay: '1s', max_delay: '5s' });
    expect([1, 2, 3, 4, 5].map((k) => delayAfter(p, k, 0.5))).to.deep.equal([S, 2n * S, 4n * S, 5n * S, 5n * S]);
    expect(delayAfter(p, 6, 0.5)).to.equal(null);
    const fixed = policy({ attempts: 3, backoff: 'fixed', delay: '3s' });
    expect([1, 2, 3].map((k) => delayAfter(fixed, k, 0.5))).to.deep.equal([3n * S, 3n * S, null]);
    const huge = policy({ attempts: 1000, delay: '1s', factor: 100, max_delay: '1h' });
    expect(delayAfter(huge, 999, 0.5)).to.equal(3600n * S);
  });

  it('jitter moves the delay by up to its fraction either way, never past max_delay', () => {
    const p = policy({ attempts: 3, backoff: 'fixed', delay: '10s', jitter: 0.2, max_delay: '11s' });
    expect(delayAfter(p, 1, 0)).to.equal(8n * S);
    expect(delayAfter(p, 1, 0.5)).to.equal(10n * S);
    expect(delayAfter(p, 1, 0.999999)).to.equal(11n * S); // 12 s less a hair, capped at 11 s
  });

  it('Retry-After replaces a shorter delay, capped by max_delay; seconds or an HTTP date', () => {
    const p = policy({ attempts: 3, delay: '1s', max_delay: '30s' });
    expect(delayAfter(p, 1, 0.5, 2n * S)).to.equal(2n * S);
    expect(delayAfter(p, 1, 0.5, 3600n * S)).to.equal(30n * S);
    expect(delayAfter(p, 2, 0.5, 1n)).to.equal(2n * S);
    const now = Date.parse('2026-11-27T12:00:00Z');
    expect(retryAfterNs('2', now)).to.equal(2n * S);
    expect(retryAfterNs(' 120 ', now)).to.equal(120n * S);
    expect(retryAfterNs('Fri, 27 Nov 2026 12:00:05 GMT', now)).to.equal(5n * S);
    expect(retryAfterNs('Fri, 27 Nov 2026 11:00:00 GMT', now)).to.equal(0n);
    for (const bad of [undefined, '', '-1', '1.5', 'soon', '2026-11-27T12:00:05Z']) expect(retryAfterNs(bad, now), String(bad)).to.equal(null);
  });

  it('retries what may heal: non-zero exits, signals, 5xx, 429, 408, no response, broker errors; not other 4xx, spawn errors or no rule', () => {
    expect(worthRetrying({ kind: 'exit', status: 1, stderr: '' })).to.equal(true);
    expect(worthRetrying({ kind: 'signal', signal: 'SIGKILL', stderr: '' })).to.equal(true);
    for (const status of [500, 502, 503, 429, 408]) expect(worthRetrying({ kind: 'http_response', status }), String(status)).to.equal(true);
    for (const status of [400, 401, 403, 404, 409, 422]) expect(worthRetrying({ kind: 'http_response', status }), String(status)).to.equal(false);
    expect(worthRetrying({ kind: 'network_error', error: 'ECONNREFUSED' })).to.equal(true);
    expect(worthRetrying({ kind: 'broker_error', error: 'closed' })).to.equal(true);
    expect(worthRetrying({ kind: 'runner_error', error: 'child died' })).to.equal(true);
    // cluster mode: no node with the rule's tags in time; a later attempt may find one
    expect(worthRetrying({ kind: 'no_node', on: ['db'] })).to.equal(true);
    expect(worthRetrying({ kind: 'spawn_error', error: 'ENOENT' })).to.equal(false);
    expect(worthRetrying({ kind: 'no_rule' })).to.equal(false);
    expect(worthRetrying({ kind: 'delivered' })).to.equal(false);
  });

  describe('on: the failure classes retried', () => {
    const exit = (status: number): AttemptOutcome => ({ kind: 'exit', status, stderr: '' });
    const http = (status: number): AttemptOutcome => ({ kind: 'http_response', status });
    const classes = (...texts: string[]): readonly RetryClass[] => {
      const r = readRetryOn(texts);
      if (typeof r === 'string') throw new Error(r);
      return r;
    };
    const OTHERS: AttemptOutcome[] = [
      { kind: 'signal', signal: 'SIGKILL', stderr: '' }, { kind: 'network_error', error: 'reset' },
      { kind: 'broker_error', error: 'closed' }, { kind: 'runner_error', error: 'died' },
    ];
    const NO_NODE: AttemptOutcome = { kind: 'no_node', on: ['db', 'eu'] };

    it('is read in the order given, each text to one class; absent, the policy has no on member', () => {
      expect(policy({ attempts: 3, delay: '1s', on: ['5xx', '429', 'network', 'exit:75', 'exit', 'signal', '4xx', 'broker', 'runner'] }).on).to.deep.equal([
        { kind: '5xx', value: 0 }, { kind: 'http_status', value: 429 }, { kind: 'network', value: 0 }, { kind: 'exit_status', value: 75 },
        { kind: 'exit', value: 0 }, { kind: 'signal', value: 0 }, { kind: '4xx', value: 0 }, { kind: 'broker', value: 0 }, { kind: 'runner', value: 0 },
      ]);
      expect(policy({ attempts: 3, delay: '1s' })).to.not.have.property('on');
      expect(policy({ attempts: 2, delay: '1s', on: Array.from({ length: 32 }, (_, i) => String(400 + i)) }).on).to.have.length(32);
    });

    it('refuses a list that is not one, empty, too long, with an unknown class, a duplicate, or a status out of range, naming retry.on', () => {
      const cases: [unknown, string | RegExp][] = [
        ['5xx', /^retry\.on: must be a list of failure classes \(exit, exit:N \(1 to 255\), signal, 4xx, 5xx, NNN \(400 to 599\), network, broker, runner\)$/],
        [{ '5xx': true }, /^retry\.on: must be a list/],
        [[], 'retry.on: must name at least one failure class'],
        [Array.from({ length: 33 }, (_, i) => String(400 + i)), 'retry.on: names at most 32 failure classes'],
        [['5xx', 'teapot'], /^retry\.on: teapot is not a failure class \(known: exit, /],
        [['5XX'], /^retry\.on: 5XX is not a failure class/],
        [['exit:007'], /^retry\.on: exit:007 is not a failure class/],
        [['5xx', ''], /^retry\.on: entry 2 is not a failure class/],
        [['5xx ,429'], /^retry\.on: entry 1 is not a failure class/],
        [['5xx', 404], 'retry.on: entry 2 is not a string'],
        [['5xx', '429', '5xx'], 'retry.on: 5xx is given twice'],
        [['exit:0'], 'retry.on: exit:0: an exit status is from 1 to 255'],
        [['exit:256'], 'retry.on: exit:256: an exit status is from 1 to 255'],
        [['302'], 'retry.on: 302: an HTTP status here is from 400 to 599'],
        [['600'], 'retry.on: 600: an HTTP status here is from 400 to 599'],
        [['0'], 'retry.on: 0: an HTTP status here is from 400 to 599'],
      ];
      for (const [on, why] of cases) {
        const text = refused({ attempts: 3, delay: '1s', on });
        if (typeof why === 'string') expect(text, JSON.stringify(on)).to.equal(why);
        else expect(text, JSON.stringify(on)).to.match(why);
      }
      // attempts is required with on, as with any other retry field
      expect(refused({ on: ['5xx'] })).to.match(/^retry\.attempts: must be an integer/);
    });

    it('without on: exactly the default list, exit signal 5xx 408 429 network broker runner', () => {
      const listed = classes('exit', 'signal', '5xx', '408', '429', 'network', 'broker', 'runner');
      expect(DEFAULT_RETRY_ON).to.deep.equal(listed);
      const outcomes: AttemptOutcome[] = [
        ...[1, 2, 75, 255].map(exit), ...[400, 401, 404, 407, 408, 409, 429, 499, 500, 503, 599, 600, 302, 0].map(http), ...OTHERS,
        { kind: 'spawn_error', error: 'ENOENT' }, { kind: 'no_rule' }, { kind: 'delivered' }, { kind: 'aborted' }, NO_NODE,
      ];
      for (const o of outcomes) expect(worthRetrying(o), JSON.stringify(o)).to.equal(worthRetrying(o, listed));
      // a status above 599 (no HTTP class) counts as a server's error, as it always did
      expect(worthRetrying(http(600))).to.equal(true);
    });

    it('with on: only what it names, the default replaced', () => {
      const only404 = classes('404');
      expect(worthRetrying(http(404), only404)).to.equal(true);
      for (const o of [http(500), http(503), http(429), http(405), exit(1), ...OTHERS]) expect(worthRetrying(o, only404), JSON.stringify(o)).to.equal(false);
      const exit75 = classes('exit:75');
      expect([exit(75), exit(3), exit(1)].map((o) => worthRetrying(o, exit75))).to.deep.equal([true, false, false]);
      expect(worthRetrying(OTHERS[0]!, exit75)).to.equal(false);
      expect([exit(3), exit(255)].map((o) => worthRetrying(o, classes('exit')))).to.deep.equal([true, true]);
      const fourxx = classes('4xx');
      expect([400, 404, 499, 500, 399].map((st) => worthRetrying(http(st), fourxx))).to.deep.equal([true, true, true, false, false]);
      expect([499, 500, 599, 600].map((st) => worthRetrying(http(st), classes('5xx')))).to.deep.equal([false, true, true, true]);
      expect(OTHERS.map((o) => worthRetrying(o, classes('signal', 'network')))).to.deep.equal([true, true, false, false]);
      expect(OTHERS.map((o) => worthRetrying(o, classes('broker', 'runner')))).to.deep.equal([false, false, true, true]);
      // no_node is in the class runner, and in no other
      expect(worthRetrying(NO_NODE, classes('runner'))).to.equal(true);
      expect(worthRetrying(NO_NODE, classes('exit', 'signal', '4xx', '5xx', 'network', 'broker'))).to.equal(false);
      // no list retries these: a process that could not start, a job no rule matched, a success, a stop
      const every = classes('exit', 'signal', '4xx', '5xx', 'network', 'broker', 'runner');
      for (const o of [{ kind: 'spawn_error', error: 'ENOENT' }, { kind: 'no_rule' }, { kind: 'delivered' }, { kind: 'aborted' }, exit(0), http(200)] as AttemptOutcome[]) {
        expect(worthRetrying(o, every), JSON.stringify(o)).to.equal(false);
      }
    });
  });
});
