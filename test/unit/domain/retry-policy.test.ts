// A rule's retry policy (lib/domain/retry-policy.ts): the fields as HTTP and TCP give them,
// refusals naming the field, the delay before each next attempt (fixed, exponential, capped,
// jitter, Retry-After), and which outcomes are worth another attempt.
import { expect } from 'chai';
import { delayAfter, readRetry, retryAfterNs, worthRetrying, type RetryPolicy } from '../../../lib/domain/retry-policy.ts';

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
    expect(worthRetrying({ kind: 'spawn_error', error: 'ENOENT' })).to.equal(false);
    expect(worthRetrying({ kind: 'no_rule' })).to.equal(false);
    expect(worthRetrying({ kind: 'delivered' })).to.equal(false);
  });
});
