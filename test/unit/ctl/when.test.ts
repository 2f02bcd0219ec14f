// WHEN and durations of tickd ctl (lib/ctl/when.ts): every form, relative times against a fixed
// now, exact nanoseconds, the i64 bounds, and the messages of rejected input.
import { expect } from 'chai';
import { I64_MAX } from '../../../lib/domain/time.ts';
import { parseDurationMs, parseDurationNs, parseWhen } from '../../../lib/ctl/when.ts';

const S = 1_000_000_000n;
const NOW = 1_775_822_400_123_456_789n; // 2026-04-10T12:00:00.123456789Z

function ns(words: string[]): bigint {
  const r = parseWhen(words, NOW);
  if ('error' in r) throw new Error(r.error);
  return r.ns;
}

function error(words: string[]): string {
  const r = parseWhen(words, NOW);
  expect(r, JSON.stringify(words)).to.have.property('error');
  return (r as { error: string }).error;
}

describe('ctl/when', () => {
  it('reads durations in every unit, compound ones, exactly', () => {
    expect(parseDurationNs('30s')).to.equal(30n * S);
    expect(parseDurationNs('5m')).to.equal(300n * S);
    expect(parseDurationNs('2h')).to.equal(7200n * S);
    expect(parseDurationNs('1d')).to.equal(86_400n * S);
    expect(parseDurationNs('1h30m')).to.equal(5400n * S);
    expect(parseDurationNs('250ms')).to.equal(250_000_000n);
    expect(parseDurationNs('7us')).to.equal(7000n);
    expect(parseDurationNs('3ns')).to.equal(3n);
    expect(parseDurationNs('0s')).to.equal(0n);
    for (const bad of ['', '5', 's', '1.5s', '-5s', '5 s', '5sec', '5S', '1h 30m', 'h1']) expect(parseDurationNs(bad), bad).to.equal(null);
  });

  it('takes plain seconds and durations for options, within bounds', () => {
    expect(parseDurationMs('5', 1, 60_000)).to.equal(5000);
    expect(parseDurationMs('500ms', 1, 60_000)).to.equal(500);
    expect(parseDurationMs('1m', 1, 60_000)).to.equal(60_000);
    expect(parseDurationMs('2m', 1, 60_000)).to.match(/out of range/);
    expect(parseDurationMs('10ms', 50, 60_000)).to.match(/out of range/);
    expect(parseDurationMs('soon', 1, 60_000)).to.match(/not a duration/);
  });

  it('now and relative times count from the given now, to the nanosecond', () => {
    expect(ns(['now'])).to.equal(NOW);
    expect(ns(['+30s'])).to.equal(NOW + 30n * S);
    expect(ns(['+5m'])).to.equal(NOW + 300n * S);
    expect(ns(['+2h'])).to.equal(NOW + 7200n * S);
    expect(ns(['now+1h30m'])).to.equal(NOW + 5400n * S);
    expect(ns(['now-10s'])).to.equal(NOW - 10n * S);
    expect(ns(['+1ns'])).to.equal(NOW + 1n);
  });

  it('absolute forms are the daemon\'s: nanoseconds, UTC datetime (one or two words), RFC 3339 with a zone', () => {
    expect(ns(['1775822400000000000'])).to.equal(1_775_822_400_000_000_000n);
    expect(ns(['-1'])).to.equal(-1n);
    expect(ns(['2026-04-10 12:00:00'])).to.equal(1_775_822_400n * S);
    expect(ns(['2026-04-10', '12:00:00'])).to.equal(1_775_822_400n * S);
    expect(ns(['2026-04-10T14:00:00.123456789+02:00'])).to.equal(1_775_822_400_123_456_789n);
    expect(ns(['2026-04-10T12:00:00Z'])).to.equal(1_775_822_400n * S);
  });

  it('rejects with a message that quotes the input and says what is expected', () => {
    expect(error(['tomorrow'])).to.match(/^invalid WHEN "tomorrow": expected integer nanoseconds.*\+DURATION/);
    expect(error(['+5'])).to.match(/"5" is not a duration/);
    expect(error(['now+'])).to.match(/is not a duration/);
    expect(error(['2026-04-10T12:00:00'])).to.match(/needs a zone/);
    expect(error(['2026-02-31 12:00:00'])).to.match(/day 31 out of range/);
    expect(error(['a', 'b'])).to.match(/WHEN is one word, or two/);
    expect(error(['2026-04-10', '12:00:00', 'x'])).to.match(/WHEN is one word, or two/);
    expect(error([])).to.equal('missing WHEN');
  });

  it('keeps relative times inside i64', () => {
    expect(error(['+106752d'])).to.match(/out of range/);
    const r = parseWhen(['+0s'], I64_MAX);
    expect(r).to.deep.equal({ ns: I64_MAX });
    expect(parseWhen(['+1ns'], I64_MAX)).to.have.property('error').that.matches(/out of range/);
  });
});
