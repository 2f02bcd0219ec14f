// The behaviour tickd-protocol(7) documents for time zones and DST, held against the pinned
// cron library (lib/schedule/calendar.ts): an upgrade that changes any of it fails here.
import { expect } from 'chai';
import { Cron } from 'croner';
import sinon from 'sinon';
import { formatIso, parseIsoTimestamp } from '../../../lib/domain/time.ts';
import { Calendar, cronError, zoneDatabase, type Timing } from '../../../lib/schedule/calendar.ts';

const at = (iso: string): bigint => parseIsoTimestamp(iso) as bigint;
const cron = (expr: string, tz = 'UTC', bounds: Partial<Timing> = {}): Calendar => new Calendar({ cron: expr, every: null, tz, start: null, end: null, ...bounds });
const next = (c: Calendar, from: string, n: number): string[] => c.next(at(from), n).map(formatIso);

describe('schedule calendar: when occurrences fall', () => {
  describe('America/New_York (2026: spring forward 8 March 02:00 -> 03:00, fall back 1 November 02:00 -> 01:00)', () => {
    const tz = 'America/New_York';
    it('a fixed time inside the spring-forward gap runs at the end of the gap, that day', () => {
      expect(next(cron('30 2 * * *', tz), '2026-03-06T12:00:00Z', 4)).to.deep.equal([
        '2026-03-07T07:30:00Z', // 02:30 EST
        '2026-03-08T07:00:00Z', // 03:00 EDT: 02:30 does not exist
        '2026-03-09T06:30:00Z', // 02:30 EDT
        '2026-03-10T06:30:00Z',
      ]);
    });
    it('a fixed time inside the repeated hour runs once, at its first occurrence', () => {
      expect(next(cron('30 1 * * *', tz), '2026-10-30T12:00:00Z', 3)).to.deep.equal([
        '2026-10-31T05:30:00Z', // 01:30 EDT
        '2026-11-01T05:30:00Z', // 01:30 EDT, not again at 01:30 EST (06:30Z)
        '2026-11-02T06:30:00Z', // 01:30 EST
      ]);
    });
    it('a minute-stepped expression runs in both copies of the repeated hour and skips the gap', () => {
      expect(next(cron('*/30 * * * *', tz), '2026-11-01T04:40:00Z', 5)).to.deep.equal([
        '2026-11-01T05:00:00Z', '2026-11-01T05:30:00Z', // 01:00, 01:30 EDT
        '2026-11-01T06:00:00Z', '2026-11-01T06:30:00Z', // 01:00, 01:30 EST
        '2026-11-01T07:00:00Z', // 02:00 EST
      ]);
      expect(next(cron('*/30 * * * *', tz), '2026-03-08T06:10:00Z', 3)).to.deep.equal([
        '2026-03-08T06:30:00Z', // 01:30 EST
        '2026-03-08T07:00:00Z', // 03:00 EDT: 02:00 and 02:30 do not exist
        '2026-03-08T07:30:00Z',
      ]);
    });
    it('a second-stepped expression runs every second of both copies of the repeated hour', () => {
      const c = cron('*/20 59 1 * * *', tz);
      expect(next(c, '2026-11-01T05:58:59Z', 7)).to.deep.equal([
        '2026-11-01T05:59:00Z', '2026-11-01T05:59:20Z', '2026-11-01T05:59:40Z', // 01:59 EDT
        '2026-11-01T06:59:00Z', '2026-11-01T06:59:20Z', '2026-11-01T06:59:40Z', // 01:59 EST
        '2026-11-02T06:59:00Z',
      ]);
    });
  });

  describe('Europe/Berlin (2026: spring forward 29 March 02:00 -> 03:00, fall back 25 October 03:00 -> 02:00)', () => {
    const tz = 'Europe/Berlin';
    it('a fixed time inside the gap runs at its end; inside the repeated hour, once', () => {
      expect(next(cron('30 2 * * *', tz), '2026-03-28T12:00:00Z', 2)).to.deep.equal(['2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z']);
      expect(next(cron('30 2 * * *', tz), '2026-10-24T12:00:00Z', 2)).to.deep.equal(['2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z']);
    });
    it('a minute-stepped expression across both changes', () => {
      expect(next(cron('0,30 2 * * *', tz), '2026-10-24T23:00:00Z', 4)).to.deep.equal([
        '2026-10-25T00:00:00Z', '2026-10-25T00:30:00Z', // 02:00, 02:30 CEST
        '2026-10-25T01:00:00Z', '2026-10-25T01:30:00Z', // 02:00, 02:30 CET
      ]);
      expect(next(cron('*/15 * * * *', tz), '2026-03-29T00:40:00Z', 3)).to.deep.equal([
        '2026-03-29T00:45:00Z', // 01:45 CET
        '2026-03-29T01:00:00Z', // 03:00 CEST
        '2026-03-29T01:15:00Z',
      ]);
    });
  });

  it('ORs day-of-month and day-of-week when both are restricted (POSIX cron); L, W and # as documented', () => {
    expect(next(cron('0 0 1 * MON'), '2026-06-28T00:00:00Z', 3)).to.deep.equal(['2026-06-29T00:00:00Z', '2026-07-01T00:00:00Z', '2026-07-06T00:00:00Z']);
    expect(next(cron('0 0 L * *'), '2026-02-01T00:00:00Z', 2)).to.deep.equal(['2026-02-28T00:00:00Z', '2026-03-31T00:00:00Z']);
    expect(next(cron('0 0 * * FRI#L'), '2026-11-01T00:00:00Z', 1)).to.deep.equal(['2026-11-27T00:00:00Z']);
    expect(next(cron('0 0 15W * *'), '2026-08-01T00:00:00Z', 1)).to.deep.equal(['2026-08-14T00:00:00Z']); // the 15th is a Saturday
    expect(next(cron('0 0 29 2 *'), '2026-01-01T00:00:00Z', 2)).to.deep.equal(['2028-02-29T00:00:00Z', '2032-02-29T00:00:00Z']);
  });

  it('an interval is aligned to the epoch, or to start; start is inclusive and end exclusive', () => {
    const every = (s: bigint, bounds: Partial<Timing> = {}): Calendar => new Calendar({ cron: null, every: s * 1_000_000_000n, tz: 'UTC', start: null, end: null, ...bounds });
    expect(next(every(30n), '2026-11-27T12:00:07.5Z', 3)).to.deep.equal(['2026-11-27T12:00:30Z', '2026-11-27T12:01:00Z', '2026-11-27T12:01:30Z']);
    expect(next(every(3600n), '2026-11-27T12:00:00Z', 1)).to.deep.equal(['2026-11-27T13:00:00Z']);
    const anchored = every(3600n, { start: at('2026-11-27T12:20:00Z'), end: at('2026-11-27T15:20:00Z') });
    expect(next(anchored, '2026-11-01T00:00:00Z', 5)).to.deep.equal(['2026-11-27T12:20:00Z', '2026-11-27T13:20:00Z', '2026-11-27T14:20:00Z']);
    expect(next(cron('0 * * * *', 'UTC', { start: at('2026-11-27T13:00:00Z'), end: at('2026-11-27T15:00:00Z') }), '2026-11-27T00:00:00Z', 5))
      .to.deep.equal(['2026-11-27T13:00:00Z', '2026-11-27T14:00:00Z']);
  });

  it('the last occurrence at or before an instant agrees with the next ones, across DST too', () => {
    const c = cron('*/30 * * * *', 'America/New_York');
    expect(formatIso(c.atOrBefore(at('2026-11-01T06:10:00Z'))!)).to.equal('2026-11-01T06:00:00Z'); // 01:00 EST
    expect(formatIso(c.atOrBefore(at('2026-11-01T06:00:00Z'))!)).to.equal('2026-11-01T06:00:00Z'); // at it: included
    expect(formatIso(c.atOrBefore(at('2026-11-01T05:59:59.999999999Z'))!)).to.equal('2026-11-01T05:30:00Z');
    expect(formatIso(cron('30 2 * * *', 'America/New_York').atOrBefore(at('2026-03-08T12:00:00Z'))!)).to.equal('2026-03-08T07:00:00Z');
    expect(cron('0 * * * *', 'UTC', { start: at('2026-11-27T13:00:00Z') }).atOrBefore(at('2026-11-27T12:59:59Z'))).to.equal(null);
    expect(cron('0 * * * *', 'UTC').count(at('2026-11-27T00:00:00Z'), at('2026-11-28T00:00:00Z'), 100)).to.deep.equal({ count: 24, more: false });
    expect(cron('0 * * * *', 'UTC').count(at('2026-11-27T00:00:00Z'), at('2026-11-28T00:00:00Z'), 10)).to.deep.equal({ count: 10, more: true });
  });

  it('a next occurrence 40 days away is exact (no timer arithmetic here)', () => {
    expect(next(cron('0 9 6 1 *', 'Europe/Berlin'), '2026-11-27T09:00:00Z', 1)).to.deep.equal(['2027-01-06T08:00:00Z']);
  });

  it('says why an expression is refused, and which zone database it uses', () => {
    expect(cronError('0 2 * * *', 'UTC')).to.equal(null);
    expect(cronError('*/10 0 2 * * *', 'UTC')).to.equal(null);
    expect(cronError('61 * * * *', 'UTC')).to.match(/minute/);
    expect(cronError('* * *', 'UTC')).to.match(/five, six/);
    expect(cronError('0 0 0 * * * 2030', 'UTC')).to.match(/5 or 6 parts/);
    expect(zoneDatabase()).to.match(/^\d{4}[a-z]$/);
  });

  describe('schedules of one expression share its last answer (one croner step a second, not one a schedule)', () => {
    it('any instant of a second gets the next whole second on, whichever schedule asks first', () => {
      const [a, b] = [cron('* * * * * *'), cron('* * * * * *')];
      const s = at('2026-03-29T00:59:59Z');
      expect(formatIso(a.after(s + 999_999_999n)!)).to.equal('2026-03-29T01:00:00Z');
      expect(formatIso(b.after(s)!)).to.equal('2026-03-29T01:00:00Z'); // the same second: shared
      expect(formatIso(b.after(s + 1_000_000_000n)!)).to.equal('2026-03-29T01:00:01Z'); // the next: asked again
      expect(formatIso(a.after(s - 1n)!)).to.equal('2026-03-29T00:59:59Z'); // the second before
    });
    it('a thousand schedules asking in one second take one croner step', () => {
      const step = sinon.spy(Cron.prototype, 'nextRun');
      try {
        const s = at('2027-01-01T00:00:07Z');
        const answers = Array.from({ length: 1000 }, (_, i) => cron('0 0 1 1 *', 'Asia/Tokyo').after(s + BigInt(i) * 999_000n));
        expect(new Set(answers.map((t) => formatIso(t!)))).to.deep.equal(new Set(['2027-12-31T15:00:00Z']));
        expect(step.callCount).to.equal(1);
      } finally {
        step.restore();
      }
    });
    it('in a zone, across a DST change, the answers croner gives each instant', () => {
      const from = at('2026-03-29T00:58:00Z'); // Berlin springs forward at 01:00Z
      const shared = cron('*/20 * * * * *', 'Europe/Berlin');
      const answers = Array.from({ length: 400 }, (_, i) => from + BigInt(i) * 333_000_000n).map((t) => shared.after(t));
      const own = new Cron('*/20 * * * * *', { timezone: 'Europe/Berlin' });
      const alone = Array.from({ length: 400 }, (_, i) => from + BigInt(i) * 333_000_000n).map((t) => BigInt(own.nextRun(new Date(Number(t / 1_000_000n)))!.getTime()) * 1_000_000n);
      expect(answers).to.deep.equal(alone);
      expect(new Set(answers.map(String)).size).to.be.greaterThan(5);
    });
  });

  describe('the ends of the range, and zone spellings', () => {
    const MAX = (1n << 63n) - 1n;
    it('a nominal time past i64 nanoseconds (2262) is none, for a cron expression and an interval alike', () => {
      const start = MAX - 1_000_000_000n;
      expect(cron('0 0 1 1 *', 'UTC', { start }).after(start - 5n)).to.equal(null);
      expect(cron('0 0 1 1 *', 'UTC', { start }).next(0n, 3)).to.deep.equal([]);
      const every = new Calendar({ cron: null, every: 366n * 86_400_000_000_000n, tz: 'UTC', start, end: null });
      expect(every.next(start - 1n, 3)).to.deep.equal([start]);
      expect(every.after(MAX)).to.equal(null);
    });

    it('any spelling of a zone gives the same times, and croner is given the zone database\'s name', async () => {
      const { zoneOf } = await import('../../../lib/schedule/zone.ts');
      expect(zoneOf('america/NEW_york')).to.equal('America/New_York');
      expect(zoneOf('Europe/Berlin')).to.equal('Europe/Berlin');
      const from = '2026-03-29T00:30:00Z';
      const want = next(cron('30 2 * * *', 'Europe/Berlin'), from, 3);
      expect(next(cron('30 2 * * *', 'EUROPE/berlin'), from, 3)).to.deep.equal(want);
      const made = sinon.spy(Cron.prototype, 'nextRun');
      try {
        next(cron('15 4 * * *', 'eUrOpE/bErLiN'), from, 1);
        expect(made.called).to.equal(true);
        for (const call of made.thisValues) expect((call as Cron).options.timezone).to.equal('Europe/Berlin');
      } finally {
        made.restore();
      }
    });
  });
});
