import { expect } from 'chai';
import { readSchedule, SCHEDULE_DEFAULTS, type Schedule } from '../../../lib/schedule/spec.ts';

const S = 1_000_000_000n;
const ok = (fields: Record<string, unknown>, id = 'nightly.backup'): Schedule => {
  const r = readSchedule(id, fields);
  if (!('schedule' in r)) throw new Error(`${r.field}: ${r.error}`);
  return r.schedule;
};
const refused = (fields: Record<string, unknown>, id = 's'): string => {
  const r = readSchedule(id, fields);
  if ('schedule' in r) throw new Error('taken');
  return `${r.field}: ${r.error}`;
};

describe('schedule fields', () => {
  it('fills in every default', () => {
    expect(ok({ cron: '30 2 * * *' })).to.deep.equal({
      id: 'nightly.backup', cron: '30 2 * * *', every: null, tz: 'UTC', start: null, end: null, limit: null,
      jitter: 0n, missed: 'once', catchup: 3600n * S, overlap: 'allow', paused: false, keep: 10,
    });
    expect(SCHEDULE_DEFAULTS.missed).to.equal('once');
  });

  it('takes JSON values (HTTP) and the text of key=value options (TCP) alike', () => {
    const http = ok({ every: '1h30m', tz: 'Europe/Berlin', start: '2026-12-01T00:00:00Z', end: 1_900_000_000_000_000_000n, limit: 10, jitter: '30s', missed: 'all', catchup: '2h', overlap: 'queue', paused: true });
    const tcp = ok({ every: '1h30m', tz: 'Europe/Berlin', start: '2026-12-01T00:00:00Z', end: '1900000000000000000', limit: '10', jitter: '30s', missed: 'all', catchup: '2h', overlap: 'queue', paused: 'true' });
    expect(tcp).to.deep.equal(http);
    expect(http.every).to.equal(5400n * S);
    expect(http.start).to.equal(1_796_083_200_000_000_000n);
  });

  it('refuses what is wrong, naming the field', () => {
    expect(refused({})).to.match(/^cron: give exactly one of cron and every/);
    expect(refused({ cron: '* * * * *', every: '1m' })).to.match(/^every: give exactly one/);
    expect(refused({ cron: '61 * * * *' })).to.match(/^cron: .*minute/);
    expect(refused({ cron: 5 })).to.match(/^cron: must be a cron expression/);
    expect(refused({ every: '500ms' })).to.match(/^every: must be from 1s/);
    expect(refused({ every: 'often' })).to.match(/^every: not a duration such as 30s/);
    expect(refused({ cron: '* * * * *', tz: 'Mars/Olympus' })).to.match(/^tz: .* not a time zone/);
    expect(refused({ cron: '* * * * *', tz: '+01:00' })).to.match(/^tz: .* not an IANA/);
    expect(refused({ cron: '* * * * *', start: 'tomorrow' })).to.match(/^start: /);
    expect(refused({ cron: '* * * * *', start: '2026-12-02T00:00:00Z', end: '2026-12-01T00:00:00Z' })).to.match(/^end: must be after start/);
    expect(refused({ cron: '* * * * *', end: 2 ** 60 })).to.match(/^end: must be integer nanoseconds \(as a string/);
    expect(refused({ cron: '* * * * *', limit: 0 })).to.match(/^limit: /);
    expect(refused({ cron: '* * * * *', limit: '1e3' })).to.match(/^limit: /);
    expect(refused({ every: '30s', jitter: '30s' })).to.match(/^jitter: must be shorter than every/);
    expect(refused({ cron: '* * * * *', jitter: '2d' })).to.match(/^jitter: must be at most 1d/);
    expect(refused({ cron: '* * * * *', catchup: '0s' })).to.match(/^catchup: /);
    expect(refused({ cron: '* * * * *', missed: 'later' })).to.match(/^missed: must be skip, once or all/);
    expect(refused({ cron: '* * * * *', overlap: 'maybe' })).to.match(/^overlap: must be allow, skip or queue/);
    expect(refused({ cron: '* * * * *', paused: 'yes' })).to.match(/^paused: must be true or false/);
    expect(refused({ cron: '* * * * *', keep: -1 })).to.match(/^keep: must be an integer from 0 to 1000/);
    expect(refused({ cron: '* * * * *', keep: '1001' })).to.match(/^keep: /);
    expect(refused({ cron: '* * * * *', color: 'red' })).to.match(/^color: unknown field/);
    expect(refused({ cron: '* * * * *' }, 'bad id')).to.match(/^id: schedule identifier contains invalid character space/);
    expect(refused({ cron: '* * * * *' }, 'x'.repeat(991))).to.match(/^id: schedule identifier too long \(max 990/);
  });
});
