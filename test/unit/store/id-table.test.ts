// IdTable: slots and identifiers both ways (find from fresh strings, idAt back), slot reuse
// and the high-water mark, refusals that change nothing, byte prefixes, and a randomized run
// against a Map model through several index growths and arena chunks. Then the same
// identifiers through JobStore: multi-byte UTF-8 and 1 024-byte identifiers in get, takeDue
// and listings.
import { expect } from 'chai';
import { MAX_IDENTIFIER_BYTES } from '../../../lib/domain/identifier.ts';
import { MAX_ID_BYTES } from '../../../lib/store/id-arena.ts';
import { hashId, IdTable } from '../../../lib/store/id-table.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { prng } from '../../helpers/prng.ts';
import { pageAll } from './page-all.ts';

const T = 1775822400000000000n;

function add(table: IdTable, id: string): number {
  return table.add(id, hashId(id));
}

function find(table: IdTable, id: string): number {
  return table.find(id, hashId(id));
}

function remove(table: IdTable, id: string): number {
  return table.remove(id, hashId(id));
}

/** The same text as a different string object (as a parsed command brings it). */
const fresh = (id: string): string => [...id].join('');

describe('store/id-table IdTable', () => {
  it('maps identifiers to slots and back', () => {
    const table = new IdTable(4);
    const ids = ['a', 'job.1', 'é.日本.\u{1F600}', 'x'.repeat(MAX_IDENTIFIER_BYTES)];
    ids.forEach((id, i) => expect(add(table, id)).to.equal(i));
    ids.forEach((id, i) => {
      expect(find(table, fresh(id))).to.equal(i);
      expect(table.idAt(i)).to.equal(id);
      expect(table.inUse(i)).to.equal(true);
    });
    expect(find(table, 'b')).to.equal(-1);
    expect(table.size).to.equal(4);
    expect(table.length).to.equal(4);
  });

  it('reuses the slot freed last; the high-water mark stays', () => {
    const table = new IdTable();
    for (const id of ['a', 'b', 'c', 'd']) add(table, id);
    expect(remove(table, 'b')).to.equal(1);
    expect(remove(table, 'c')).to.equal(2);
    expect(remove(table, 'c')).to.equal(-1);
    expect(table.inUse(1)).to.equal(false);
    expect(table.nextSlot()).to.equal(2);
    expect(add(table, 'e')).to.equal(2);
    expect(add(table, 'f')).to.equal(1);
    expect(add(table, 'g')).to.equal(4);
    expect(table.length).to.equal(5);
    expect([0, 1, 2, 3, 4].map((s) => table.idAt(s))).to.deep.equal(['a', 'f', 'e', 'd', 'g']);
  });

  it('refuses, changing nothing, an identifier that is not well-formed UTF-16 or is over MAX_ID_BYTES', () => {
    const table = new IdTable();
    add(table, 'keep');
    remove(table, add(table, 'gone') === 1 ? 'gone' : '');
    for (const bad of ['lone\ud800', '\udc00', 'é'.repeat(MAX_ID_BYTES)]) {
      expect(() => add(table, bad), JSON.stringify(bad.slice(0, 8))).to.throw(RangeError);
      expect(table.size).to.equal(1);
      expect(table.nextSlot()).to.equal(1);
      expect(find(table, bad)).to.equal(-1);
    }
    expect(add(table, 'next')).to.equal(1);
    expect(find(table, 'keep')).to.equal(0);
  });

  it('startsWith compares bytes of the stored identifier', () => {
    const table = new IdTable();
    add(table, 'app.ü.1');
    expect(table.startsWith(0, Buffer.from('app.ü'))).to.equal(true);
    expect(table.startsWith(0, Buffer.from('app.u'))).to.equal(false);
  });

  it('agrees with a Map over random adds and removes through index growth and several arena chunks', () => {
    const rand = prng(11);
    const table = new IdTable(16);
    const model = new Map<string, number>();
    const idOf = (k: number): string => (k % 2 === 0 ? `ü.${k}.${'p'.repeat((k * 7) % 1000)}` : `job.${k}`);
    for (let step = 0; step < 40_000; step++) {
      const id = idOf(Math.floor(rand() * 8000));
      if (rand() < 0.65) {
        if (!model.has(id)) {
          const slot = add(table, id);
          expect(table.inUse(slot)).to.equal(true);
          model.set(id, slot);
        } else expect(find(table, fresh(id))).to.equal(model.get(id));
      } else {
        expect(remove(table, id)).to.equal(model.get(id) ?? -1);
        model.delete(id);
      }
    }
    expect(table.size).to.equal(model.size);
    const seen = new Map<number, string>();
    for (const [id, slot] of model) {
      expect(find(table, fresh(id))).to.equal(slot);
      expect(table.idAt(slot)).to.equal(id);
      seen.set(slot, id);
    }
    for (let s = 0; s < table.length; s++) expect(table.inUse(s)).to.equal(seen.has(s));
    expect(table.usage().arenaBytes).to.be.at.least(2 << 20);
  });

  it('clear() forgets every identifier and slot', () => {
    const table = new IdTable();
    for (let i = 0; i < 100; i++) add(table, `c${i}`);
    table.clear();
    expect(table.size).to.equal(0);
    expect(table.length).to.equal(0);
    expect(find(table, 'c1')).to.equal(-1);
    expect(add(table, 'c1')).to.equal(0);
  });
});

describe('store/jobs JobStore identifiers', () => {
  const job = (id: string, execution = T) => ({ id, execution, status: 'planned' as const });

  it('multi-byte UTF-8 and 1 024-byte identifiers round-trip through get, takeDue and listings', () => {
    const store = new JobStore();
    const long = 'L'.repeat(MAX_IDENTIFIER_BYTES - 4) + '.end';
    const ids = ['plain.1', 'é.1', 'é.2', '日本.x', 'emoji.\u{1F600}', long];
    ids.forEach((id, i) => store.put(job(id, T + BigInt(i))));
    for (const id of ids) expect(store.get(fresh(id))).to.deep.equal(job(id, T + BigInt(ids.indexOf(id))));
    expect(pageAll(store, 'é.', '').map((j) => j.id).sort()).to.deep.equal(['é.1', 'é.2']);
    expect(pageAll(store, 'L', '').map((j) => j.id)).to.deep.equal([long]);
    expect(pageAll(store, '', 'e').map((j) => j.id)).to.deep.equal(['emoji.\u{1F600}']);
    expect(store.takeDue(T + 100n, 100).map((j) => j.id)).to.deep.equal(ids);
    expect(store.delete(fresh('日本.x'))).to.deep.equal(job('日本.x', T + 3n));
    expect(store.get('日本.x')).to.equal(undefined);
  });

  it('an identifier the store cannot hold is a RangeError that changes nothing', () => {
    const store = new JobStore();
    store.put(job('a'));
    expect(() => store.put(job('bad\ud800'))).to.throw(RangeError);
    expect(() => store.put(job('x'.repeat(MAX_ID_BYTES + 1)))).to.throw(RangeError);
    expect(store.size).to.equal(1);
    expect(store.counts()).to.deep.equal({ total: 1, planned: 1, triggered: 0, executed: 0, failed: 0 });
    expect(store.nextDue()).to.equal(T);
    expect(store.takeDue(T, 10).map((j) => j.id)).to.deep.equal(['a']);
    store.put(job('b'));
    expect(pageAll(store, '', '').map((j) => j.id).sort()).to.deep.equal(['a', 'b']);
  });

  it('a page walks slots: freed slots are skipped, and listing by status builds only kept jobs', () => {
    const store = new JobStore();
    for (let i = 0; i < 10; i++) store.put({ id: `s.${i}`, execution: T, status: i % 2 === 0 ? 'planned' : 'failed' });
    store.delete('s.3');
    const page = store.page('s.', '', 0, 100, (status) => status === 'failed');
    expect(page.items.map((j) => j.id)).to.deep.equal(['s.1', 's.5', 's.7', 's.9']);
    expect(page.next).to.equal(null);
    expect(store.withStatus('failed').map((j) => j.id)).to.deep.equal(['s.1', 's.5', 's.7', 's.9']);
  });
});
