// JobStore: counts under every transition, the heap of planned jobs (arming, re-arming,
// takeDue order and limit), listings by prefix and scope, and undo through put(previous).
import { expect } from 'chai';
import type { Job, JobStatus } from '../../../lib/domain/job.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { prng } from '../../helpers/prng.ts';
import { pageAll } from './page-all.ts';

const T = 1775822400000000000n;

function job(id: string, execution: bigint, status: JobStatus = 'planned'): Job {
  return { id, execution, status };
}

function ids(jobs: readonly Job[]): string[] {
  return jobs.map((j) => j.id);
}

describe('store/jobs JobStore', () => {
  let store: JobStore;
  beforeEach(() => {
    store = new JobStore();
  });

  it('clear() empties it: no job, no counts, nothing due, and it is usable again', () => {
    store.put(job('a', T));
    store.put(job('b', T + 1n, 'executed'));
    store.clear();
    expect(store.size).to.equal(0);
    expect(store.counts()).to.deep.equal({ total: 0, planned: 0, triggered: 0, executed: 0, failed: 0 });
    expect(store.nextDue()).to.equal(undefined);
    store.put(job('c', T));
    expect(ids(store.takeDue(T, 10))).to.deep.equal(['c']);
  });

  describe('get/put/delete', () => {
    it('stores a job and returns fresh plain copies', () => {
      expect(store.put(job('a.1', T))).to.equal(undefined);
      const got = store.get('a.1')!;
      expect(got).to.deep.equal({ id: 'a.1', execution: T, status: 'planned' });
      expect(store.get('a.1')).to.not.equal(got);
      expect(store.get('missing')).to.equal(undefined);
      expect(store.size).to.equal(1);
    });

    it('put replaces the whole job and returns the previous value', () => {
      store.put(job('a', T, 'executed'));
      expect(store.put(job('a', T + 5n))).to.deep.equal(job('a', T, 'executed'));
      expect(store.get('a')).to.deep.equal(job('a', T + 5n));
      expect(store.size).to.equal(1);
    });

    it('delete returns the previous value, then undefined', () => {
      store.put(job('a', T, 'triggered'));
      expect(store.delete('a')).to.deep.equal(job('a', T, 'triggered'));
      expect(store.delete('a')).to.equal(undefined);
      expect(store.get('a')).to.equal(undefined);
      expect(store.size).to.equal(0);
    });

    it('setStatus returns the previous value; a missing job is left alone', () => {
      store.put(job('a', T));
      expect(store.setStatus('a', 'triggered')).to.deep.equal(job('a', T));
      expect(store.get('a')!.status).to.equal('triggered');
      expect(store.setStatus('nope', 'failed')).to.equal(undefined);
      expect(store.size).to.equal(1);
    });

    it('statusOf answers as get(id)?.status does, through every change', () => {
      expect(store.statusOf('a')).to.equal(undefined);
      store.put(job('a', T));
      store.put(job('b', T, 'failed'));
      expect(store.statusOf('a')).to.equal('planned');
      store.setStatus('a', 'executed');
      expect(store.statusOf('a')).to.equal('executed');
      expect(store.statusOf('b')).to.equal('failed');
      store.delete('a');
      expect(store.statusOf('a')).to.equal(undefined);
      expect(store.statusOf('b')).to.equal(store.get('b')!.status);
    });
  });

  describe('counts', () => {
    it('follow create, every transition, replace and delete', () => {
      const zero = { total: 0, planned: 0, triggered: 0, executed: 0, failed: 0 };
      expect(store.counts()).to.deep.equal(zero);
      store.put(job('a', T));
      store.put(job('b', T));
      store.put(job('c', T));
      expect(store.counts()).to.deep.equal({ ...zero, total: 3, planned: 3 });
      store.setStatus('a', 'triggered');
      store.setStatus('b', 'failed'); // planned -> failed (no rule)
      expect(store.counts()).to.deep.equal({ total: 3, planned: 1, triggered: 1, executed: 0, failed: 1 });
      store.setStatus('a', 'executed');
      expect(store.counts()).to.deep.equal({ total: 3, planned: 1, triggered: 0, executed: 1, failed: 1 });
      store.put(job('a', T + 1n)); // SET on an executed job re-plans it
      expect(store.counts()).to.deep.equal({ total: 3, planned: 2, triggered: 0, executed: 0, failed: 1 });
      store.setStatus('c', 'triggered');
      store.setStatus('c', 'failed');
      store.setStatus('c', 'failed'); // same status twice: no drift
      expect(store.counts()).to.deep.equal({ total: 3, planned: 1, triggered: 0, executed: 0, failed: 2 });
      store.delete('b');
      store.delete('c');
      store.delete('missing');
      expect(store.counts()).to.deep.equal({ ...zero, total: 1, planned: 1 });
      store.delete('a');
      expect(store.counts()).to.deep.equal(zero);
    });

    it('stay right across takeDue then setStatus (taken jobs count as planned until set)', () => {
      store.put(job('a', T));
      store.put(job('b', T));
      expect(ids(store.takeDue(T, 10))).to.deep.equal(['a', 'b']);
      expect(store.counts()).to.deep.equal({ total: 2, planned: 2, triggered: 0, executed: 0, failed: 0 });
      store.setStatus('a', 'triggered');
      store.setStatus('b', 'failed');
      expect(store.counts()).to.deep.equal({ total: 2, planned: 0, triggered: 1, executed: 0, failed: 1 });
    });
  });

  describe('due heap', () => {
    it('nextDue is the earliest planned time; non-planned jobs are not armed', () => {
      expect(store.nextDue()).to.equal(undefined);
      store.put(job('late', T + 10n));
      store.put(job('done', T - 10n, 'executed'));
      store.put(job('running', T - 5n, 'triggered'));
      store.put(job('early', T + 1n));
      expect(store.nextDue()).to.equal(T + 1n);
      expect(ids(store.takeDue(T + 100n, 10))).to.deep.equal(['early', 'late']);
      expect(store.nextDue()).to.equal(undefined);
    });

    it('takeDue returns due jobs in time order, FIFO among equal times, up to the limit', () => {
      store.put(job('c', T + 2n));
      store.put(job('x', T + 1n));
      store.put(job('y', T + 1n));
      store.put(job('a', T));
      store.put(job('future', T + 3n));
      const first = store.takeDue(T + 2n, 2);
      expect(first).to.deep.equal([job('a', T), job('x', T + 1n)]);
      expect(ids(store.takeDue(T + 2n, 10))).to.deep.equal(['y', 'c']);
      expect(store.takeDue(T + 2n, 10)).to.deep.equal([]);
      expect(store.takeDue(T + 3n, 0)).to.deep.equal([]);
      expect(store.nextDue()).to.equal(T + 3n);
      // taken jobs stay stored and planned until the caller decides
      expect(store.get('a')).to.deep.equal(job('a', T));
    });

    it('takes a job whose time is in the past at once', () => {
      store.put(job('old', -1n));
      expect(ids(store.takeDue(0n, 1))).to.deep.equal(['old']);
    });

    it('a taken job is not taken again, even if left planned', () => {
      store.put(job('a', T));
      store.takeDue(T, 10);
      expect(store.takeDue(T + 1000n, 10)).to.deep.equal([]);
    });

    it('re-arms a triggered job set back to planned', () => {
      store.put(job('a', T));
      store.takeDue(T, 10);
      store.setStatus('a', 'triggered');
      store.put(job('a', T + 50n)); // SET of a triggered job
      expect(store.nextDue()).to.equal(T + 50n);
      expect(store.takeDue(T + 50n, 10)).to.deep.equal([job('a', T + 50n)]);
    });

    it('setStatus(planned) arms a disarmed job at its current time, once', () => {
      store.put(job('a', T, 'failed'));
      expect(store.nextDue()).to.equal(undefined);
      store.setStatus('a', 'planned');
      store.setStatus('a', 'planned');
      expect(ids(store.takeDue(T, 10))).to.deep.equal(['a']);
      store.setStatus('a', 'planned'); // taken but still planned: arm again
      expect(ids(store.takeDue(T, 10))).to.deep.equal(['a']);
    });

    it('replacing a planned job moves it in time rather than duplicating it', () => {
      store.put(job('a', T + 100n));
      store.put(job('b', T + 50n));
      store.put(job('a', T));
      expect(store.nextDue()).to.equal(T);
      expect(ids(store.takeDue(T + 1000n, 10))).to.deep.equal(['a', 'b']);
    });

    it('deleting a planned job removes it from the heap', () => {
      store.put(job('a', T));
      store.put(job('b', T + 1n));
      store.delete('a');
      expect(store.nextDue()).to.equal(T + 1n);
      expect(ids(store.takeDue(T + 1n, 10))).to.deep.equal(['b']);
    });

    it('a planned job moved to a terminal status leaves the heap', () => {
      store.put(job('a', T));
      store.put(job('a', T, 'executed'));
      expect(store.nextDue()).to.equal(undefined);
    });
  });

  describe('undo via put(previous)', () => {
    it('restores a fired job to planned and armed', () => {
      store.put(job('a', T));
      const [taken] = store.takeDue(T, 1);
      const previous = store.setStatus(taken!.id, 'triggered')!;
      store.put(previous); // the persist failed: roll back
      expect(store.get('a')).to.deep.equal(job('a', T));
      expect(store.counts()).to.deep.equal({ total: 1, planned: 1, triggered: 0, executed: 0, failed: 0 });
      expect(ids(store.takeDue(T, 10))).to.deep.equal(['a']);
    });

    it('restores a deleted job and a replaced one', () => {
      store.put(job('a', T, 'triggered'));
      store.put(job('b', T + 7n));
      const deleted = store.delete('a')!;
      const replaced = store.put(job('b', T + 99n, 'planned'))!;
      store.put(replaced);
      store.put(deleted);
      expect(store.get('a')).to.deep.equal(job('a', T, 'triggered'));
      expect(store.nextDue()).to.equal(T + 7n);
      expect(store.counts()).to.deep.equal({ total: 2, planned: 1, triggered: 1, executed: 0, failed: 0 });
    });
  });

  describe('page', () => {
    beforeEach(() => {
      for (const id of ['app.a', 'app.b', 'apple', 'team1.x', 'team1.y.z', 'team2.x']) store.put(job(id, T));
    });

    const listed = (prefix: string, scope: string) => ids(pageAll(store, prefix, scope)).sort();

    it('lists everything with no prefix and no scope', () => {
      expect(listed('', '')).to.have.length(6);
    });

    it('filters by prefix', () => {
      expect(listed('app.', '')).to.deep.equal(['app.a', 'app.b']);
      expect(listed('app', '')).to.deep.equal(['app.a', 'app.b', 'apple']);
      expect(listed('nothing', '')).to.deep.equal([]);
    });

    it('restricts to the scope whichever of prefix and scope is longer', () => {
      expect(listed('', 'team1.')).to.deep.equal(['team1.x', 'team1.y.z']);
      expect(listed('team1.y', 'team1.')).to.deep.equal(['team1.y.z']);
      expect(listed('team', 'team2.')).to.deep.equal(['team2.x']);
      expect(listed('team2', 'team1.')).to.deep.equal([]);
    });

    it('a walk in small pages sees each job present throughout exactly once, whatever changes between pages', () => {
      const seen: string[] = [];
      let cursor: number | null = 0;
      let round = 0;
      while (cursor !== null) {
        const page = store.page('', '', cursor, 1);
        seen.push(...ids(page.items));
        cursor = page.next;
        // Churn between pages: new jobs (one in the slot a removal frees), and a removal.
        if (round < 4) store.put(job(`late${round}`, T));
        if (round === 2) store.delete('team2.x');
        round++;
      }
      const stable = ['app.a', 'app.b', 'apple', 'team1.x', 'team1.y.z'];
      for (const id of stable) expect(seen.filter((s) => s === id), id).to.have.length(1);
    });

    it('returns plain jobs with their status', () => {
      store.setStatus('apple', 'executed');
      expect(pageAll(store, 'apple', '')).to.deep.equal([job('apple', T, 'executed')]);
    });
  });

  describe('bad input from untyped callers', () => {
    it('rejects an unknown status, changing nothing', () => {
      const bad = { id: 'a', execution: T, status: 'bogus' } as unknown as Job;
      expect(() => store.put(bad)).to.throw(RangeError);
      store.put(job('a', T));
      expect(() => store.put(bad)).to.throw(RangeError);
      expect(() => store.setStatus('a', 'bogus' as JobStatus)).to.throw(RangeError);
      expect(store.get('a')).to.deep.equal(job('a', T));
      expect(store.counts()).to.deep.equal({ total: 1, planned: 1, triggered: 0, executed: 0, failed: 0 });
    });

    it('rejects an execution outside i64, changing nothing', () => {
      expect(() => store.put(job('a', 1n << 63n))).to.throw(RangeError);
      expect(store.size).to.equal(0);
      store.put(job('b', T, 'executed'));
      expect(() => store.put(job('b', -(1n << 63n) - 1n))).to.throw(RangeError);
      expect(store.get('b')).to.deep.equal(job('b', T, 'executed'));
      store.put(job('c', T));
      expect(() => store.put(job('c', 1n << 64n, 'failed'))).to.throw(RangeError);
      expect(store.get('c')).to.deep.equal(job('c', T));
      expect(store.nextDue()).to.equal(T);
      expect(store.counts()).to.deep.equal({ total: 2, planned: 1, triggered: 0, executed: 1, failed: 0 });
    });
  });

  it('keeps i64 extremes exactly', () => {
    store.put(job('max', 9223372036854775807n));
    store.put(job('min', -9223372036854775808n, 'failed'));
    expect(store.get('max')!.execution).to.equal(9223372036854775807n);
    expect(store.get('min')!.execution).to.equal(-9223372036854775808n);
  });

  it('reuses the slots of deleted jobs without mixing them up', () => {
    for (let i = 0; i < 10; i++) store.put(job(`j${i}`, T + BigInt(i)));
    for (let i = 0; i < 10; i += 2) store.delete(`j${i}`);
    store.put(job('new1', T - 1n, 'triggered'));
    store.put(job('new2', T + 100n));
    expect(store.get('new1')).to.deep.equal(job('new1', T - 1n, 'triggered'));
    expect(store.get('j3')).to.deep.equal(job('j3', T + 3n));
    expect(store.get('j4')).to.equal(undefined);
    expect(ids(pageAll(store, 'j', '')).sort()).to.deep.equal(['j1', 'j3', 'j5', 'j7', 'j9']);
    expect(ids(store.takeDue(T + 1000n, 100))).to.deep.equal(['j1', 'j3', 'j5', 'j7', 'j9', 'new2']);
  });

  it('does not grow with churn: the slot of a deleted job is reused', () => {
    for (let i = 0; i < 1000; i++) {
      store.put(job(`churn${i}`, T));
      store.delete(`churn${i}`);
    }
    // White-box: the slot table, not just the visible size, must stay small.
    expect((store as unknown as { ids: unknown[] }).ids.length).to.equal(1);
  });

  it('agrees with a plain model over random operations (slots, heap and counts together)', () => {
    const rand = prng(7);
    const statuses: JobStatus[] = ['planned', 'triggered', 'executed', 'failed'];
    // model: id -> job, plus the set of ids the store should have armed
    const model = new Map<string, Job>();
    const armed = new Set<string>();
    let now = T;
    for (let step = 0; step < 5000; step++) {
      const id = `j${Math.floor(rand() * 80)}`;
      const r = rand();
      if (r < 0.35) {
        const next = job(id, T + BigInt(Math.floor(rand() * 200)), statuses[Math.floor(rand() * 4)]!);
        expect(store.put(next)).to.deep.equal(model.get(id));
        model.set(id, next);
        if (next.status === 'planned') armed.add(id);
        else armed.delete(id);
      } else if (r < 0.55) {
        const status = statuses[Math.floor(rand() * 4)]!;
        const prev = model.get(id);
        expect(store.setStatus(id, status)).to.deep.equal(prev);
        if (prev !== undefined) {
          model.set(id, { ...prev, status });
          if (status === 'planned') armed.add(id);
          else armed.delete(id);
        }
      } else if (r < 0.7) {
        expect(store.delete(id)).to.deep.equal(model.get(id));
        model.delete(id);
        armed.delete(id);
      } else {
        now += BigInt(Math.floor(rand() * 20));
        const limit = Math.floor(rand() * 6);
        const taken = store.takeDue(now, limit);
        const due = [...armed].map((x) => model.get(x)!).filter((j) => j.execution <= now);
        expect(taken.length).to.equal(Math.min(limit, due.length));
        for (let i = 1; i < taken.length; i++) expect(taken[i - 1]!.execution <= taken[i]!.execution).to.equal(true);
        for (const j of taken) {
          expect(j).to.deep.equal(model.get(j.id));
          armed.delete(j.id);
        }
        if (taken.length < limit) expect(due.length).to.equal(taken.length);
      }
      const c = store.counts();
      const byStatus = (s: JobStatus) => [...model.values()].filter((j) => j.status === s).length;
      expect(c).to.deep.equal({ total: model.size, planned: byStatus('planned'), triggered: byStatus('triggered'),
        executed: byStatus('executed'), failed: byStatus('failed') });
      const earliest = [...armed].map((x) => model.get(x)!.execution).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[0];
      expect(store.nextDue()).to.equal(earliest);
    }
    expect(pageAll(store, '', '').sort((a, b) => (a.id < b.id ? -1 : 1)))
      .to.deep.equal([...model.values()].sort((a, b) => (a.id < b.id ? -1 : 1)));
  });

  it('withStatus lists the jobs of one status only', () => {
    const store = new JobStore();
    store.put({ id: 'a', execution: 1n, status: 'planned' });
    store.put({ id: 'b', execution: 2n, status: 'triggered' });
    store.put({ id: 'c', execution: 3n, status: 'triggered' });
    store.delete('c');
    store.put({ id: 'd', execution: 4n, status: 'executed' });
    expect(store.withStatus('triggered')).to.deep.equal([{ id: 'b', execution: 2n, status: 'triggered' }]);
    expect(store.withStatus('failed')).to.deep.equal([]);
  });
});
