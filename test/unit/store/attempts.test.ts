import { expect } from 'chai';
import type { Attempt } from '../../../lib/domain/attempt.ts';
import { LastAttempts, MAX_ATTEMPT_RECORDS } from '../../../lib/store/attempts.ts';
import { prng } from '../../helpers/prng.ts';

const attempt = (status: number): Attempt => ({
  rule: 'r.', runner: 'shell', startedNs: 10n, latenessNs: 1n, durationNs: 5n, outcome: { kind: 'exit', status, stderr: '' },
});

describe('store/attempts (LastAttempts)', () => {
  it('keeps one record per job, the latest, when it keeps one', () => {
    const store = new LastAttempts(10, 1);
    store.record('a', attempt(1));
    store.record('a', attempt(2));
    expect(store.size).to.equal(1);
    expect(store.get('a')).to.deep.equal(attempt(2));
    expect(store.get('b')).to.equal(undefined);
  });

  it('holds at most its capacity, evicting the record written longest ago', () => {
    const store = new LastAttempts(3, 1);
    for (const id of ['a', 'b', 'c']) store.record(id, attempt(0));
    store.record('a', attempt(1)); // a is now the newest: b is the oldest
    store.record('d', attempt(0));
    expect([...store.entries()].map(([id]) => id)).to.deep.equal(['c', 'a', 'd']);
    expect(store.size).to.equal(3);
    for (let i = 0; i < 1000; i++) store.record(`x${i}`, attempt(i));
    expect(store.size).to.equal(3);
    expect([...store.entries()].map(([id]) => id)).to.deep.equal(['x997', 'x998', 'x999']);
  });

  it('forgets a job on delete, everything on clear', () => {
    const store = new LastAttempts(3, 1);
    store.record('a', attempt(0));
    store.record('b', attempt(0));
    store.delete('a');
    store.delete('nope');
    expect([...store.entries()].map(([id]) => id)).to.deep.equal(['b']);
    store.clear();
    expect(store.size).to.equal(0);
  });

  it('defaults to 100 000 records and refuses a capacity that is not a positive integer', () => {
    expect(MAX_ATTEMPT_RECORDS).to.equal(100_000);
    expect(new LastAttempts().capacity).to.equal(100_000);
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new LastAttempts(bad)).to.throw(RangeError);
  });

  for (const [capacity, ids] of [[50, 120], [1500, 3500]] as const) {
    it(`agrees with a plain list under random records, deletes and clears, past many evictions (capacity ${capacity})`, () => {
      const rand = prng(capacity);
      const store = new LastAttempts(capacity, 1);
      let model: Array<[string, number]> = []; // oldest first
      for (let step = 0; step < 20_000; step++) {
        const id = `j${Math.floor(rand() * ids)}`;
        const r = rand();
        if (r < 0.75) {
          const status = step;
          model = model.filter(([m]) => m !== id);
          if (model.length >= capacity) model.shift();
          model.push([id, status]);
          store.record(id, attempt(status));
        } else if (r < 0.999) {
          model = model.filter(([m]) => m !== id);
          store.delete(id);
        } else {
          model = [];
          store.clear();
        }
        if (step % 97 === 0 || step > 19_900) {
          expect([...store.entries()].map(([i, a]) => [i, (a.outcome as { status: number }).status])).to.deep.equal(model);
          expect(store.size).to.equal(model.length);
          expect(store.get(id)?.outcome).to.deep.equal(model.find(([m]) => m === id) === undefined ? undefined : attempt(model.find(([m]) => m === id)![1]).outcome);
        }
      }
    });
  }

  it('keeps the last `keep` attempts of a job, oldest first; the capacity bounds the records of all jobs together', () => {
    const store = new LastAttempts(6, 3);
    for (let i = 1; i <= 5; i++) store.record('a', attempt(i));
    expect(store.history('a').map((a) => (a.outcome as { status: number }).status)).to.deep.equal([3, 4, 5]);
    expect(store.get('a')).to.deep.equal(attempt(5));
    expect(store.history('nope')).to.deep.equal([]);
    store.record('b', attempt(1));
    store.record('b', attempt(2));
    store.record('c', attempt(1)); // 3 + 2 + 1 = 6 records: all kept
    expect(store.size).to.equal(3);
    store.record('c', attempt(2)); // 7: a, recorded longest ago, goes with its three
    expect(store.history('a')).to.deep.equal([]);
    expect(store.history('b')).to.have.length(2);
    expect(store.history('c')).to.have.length(2);
    store.delete('b');
    for (let i = 0; i < 3; i++) store.record('d', attempt(i));
    expect(store.history('c')).to.have.length(2);
    expect(store.history('d')).to.have.length(3);
    expect(() => new LastAttempts(1, 0)).to.throw(RangeError);
  });

  it('entries() is a copy: the store may change while it is read', () => {
    const store = new LastAttempts(3, 1);
    for (const id of ['a', 'b', 'c']) store.record(id, attempt(0));
    const seen: string[] = [];
    for (const [id] of store.entries()) {
      seen.push(id);
      store.record(id, attempt(1));
      if (id === 'b') store.clear();
    }
    expect(seen).to.deep.equal(['a', 'b', 'c']);
  });
});
