import { expect } from 'chai';
import { readSchedule, type Schedule } from '../../../lib/schedule/spec.ts';
import { intern, NO_SKIPS, NO_TIMES, shareValues } from '../../../lib/schedule/shared.ts';

describe('schedule/shared', () => {
  const read = (id: string, fields: Record<string, unknown>): Schedule => {
    const r = readSchedule(id, fields);
    if (!('schedule' in r)) throw new Error(r.error);
    return r.schedule;
  };

  it('keeps every value of a schedule as it was', () => {
    for (const fields of [{ cron: '0 0 1 1 *' }, { every: '30s', tz: 'Europe/Berlin', missed: 'all', overlap: 'queue', jitter: '5s', catchup: '2h', start: '1000', limit: '3' }]) {
      const s = read('s.1', fields);
      expect(shareValues(s)).to.deep.equal(s);
    }
  });

  it('gives equal strings one copy (the first seen)', () => {
    const a = ['Europe', 'Berlin'].join('/');
    const b = ['Europe', 'Berlin'].join('/');
    expect(intern(a)).to.equal(a);
    expect(intern(b)).to.equal(a);
  });

  it('shares empty lists that nothing can add to (the engine makes a new list)', () => {
    expect(Object.isFrozen(NO_TIMES)).to.equal(true);
    expect(Object.isFrozen(NO_SKIPS)).to.equal(true);
    expect(() => (NO_TIMES as bigint[]).push(1n)).to.throw(TypeError);
  });
});
