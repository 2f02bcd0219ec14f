// IdIndex: open addressing over (hash, ref) pairs. Colliding hashes and runs that wrap around
// the table's end, deletion by backward shift (no entry is lost behind a hole), growth carried
// out a few buckets at a time while lookups and deletes look in both tables, and a randomized
// run against a Map model with hashes forced into a few values.
import { expect } from 'chai';
import { hashId, IdIndex, type RefKeys } from '../../../lib/store/id-index.ts';
import { prng } from '../../helpers/prng.ts';

/** Refs are small integers; ref r holds the identifier names[r]. */
class Keys implements RefKeys {
  readonly names: string[] = [];
  matches(ref: number, id: string): boolean {
    return this.names[ref] === id;
  }
  ref(id: string): number {
    this.names.push(id);
    return this.names.length - 1;
  }
}

function setup(initialBuckets = 16): { index: IdIndex; keys: Keys; add: (id: string, hash: number) => number } {
  const keys = new Keys();
  const index = new IdIndex(keys, initialBuckets);
  return {
    index,
    keys,
    add: (id, hash) => {
      const ref = keys.ref(id);
      index.insert(hash, ref);
      return ref;
    },
  };
}

describe('store/id-index IdIndex', () => {
  it('finds what was inserted, and nothing else', () => {
    const { index, add } = setup();
    const a = add('a', hashId('a'));
    const b = add('b', hashId('b'));
    expect(index.find('a', hashId('a'))).to.equal(a);
    expect(index.find('b', hashId('b'))).to.equal(b);
    expect(index.find('c', hashId('c'))).to.equal(-1);
    expect(index.size).to.equal(2);
  });

  it('keeps identifiers whose hashes are equal apart by their keys', () => {
    const { index, add } = setup();
    const refs = ['x', 'y', 'z', 'w'].map((id) => add(id, 5));
    ['x', 'y', 'z', 'w'].forEach((id, i) => expect(index.find(id, 5)).to.equal(refs[i]));
    expect(index.find('v', 5)).to.equal(-1);
  });

  it('a deletion inside a run of collisions loses none of the entries after it', () => {
    const { index, add } = setup();
    for (const id of ['a', 'b', 'c', 'd', 'e']) add(id, 3);
    add('f', 4); // home inside the run: sits after it
    expect(index.delete('b', 3)).to.be.at.least(0);
    expect(index.delete('b', 3)).to.equal(-1);
    for (const id of ['a', 'c', 'd', 'e']) expect(index.find(id, 3), id).to.be.at.least(0);
    expect(index.find('f', 4)).to.be.at.least(0);
    expect(index.size).to.equal(5);
  });

  it('runs that wrap around the end of the table stay reachable through deletions', () => {
    const { index, add } = setup(16);
    for (const id of ['p', 'q', 'r', 's']) add(id, 15); // home: the last bucket
    add('t', 0); // home 0, pushed behind the wrapped run
    add('u', 1);
    expect(index.delete('p', 15)).to.be.at.least(0);
    expect(index.delete('r', 15)).to.be.at.least(0);
    for (const [id, h] of [['q', 15], ['s', 15], ['t', 0], ['u', 1]] as const) expect(index.find(id, h), id).to.be.at.least(0);
    expect(index.find('p', 15)).to.equal(-1);
  });

  it('emptied, it finds nothing and takes the same identifiers again', () => {
    const { index, keys, add } = setup();
    for (let i = 0; i < 10; i++) add(`k${i}`, i % 3);
    for (let i = 0; i < 10; i++) expect(index.delete(`k${i}`, i % 3)).to.equal(i);
    expect(index.size).to.equal(0);
    for (let i = 0; i < 10; i++) expect(index.find(`k${i}`, i % 3)).to.equal(-1);
    keys.names.length = 0;
    for (let i = 0; i < 10; i++) add(`k${i}`, i % 3);
    for (let i = 0; i < 10; i++) expect(index.find(`k${i}`, i % 3)).to.equal(i);
  });

  it('grows past 3/4 full, moving the old table a few buckets per change; lookups see both tables meanwhile', () => {
    const { index, add } = setup(16);
    for (let i = 0; i < 12; i++) add(`g${i}`, hashId(`g${i}`));
    expect(index.buckets).to.equal(16);
    add('g12', hashId('g12')); // the 13th of 16: grows
    expect(index.buckets).to.equal(32);
    const big = setup(1024);
    for (let i = 0; i < 769; i++) big.add(`m${i}`, hashId(`m${i}`));
    expect(big.index.buckets).to.equal(2048);
    expect(big.index.migrating).to.equal(true); // 1024 old buckets, 32 per change
    for (let i = 0; i < 769; i++) expect(big.index.find(`m${i}`, hashId(`m${i}`)), `m${i}`).to.equal(i);
    // deletes during the move, of entries in either table
    for (let i = 0; i < 769; i += 7) expect(big.index.delete(`m${i}`, hashId(`m${i}`))).to.equal(i);
    for (let i = 0; i < 769; i++) expect(big.index.find(`m${i}`, hashId(`m${i}`))).to.equal(i % 7 === 0 ? -1 : i);
    for (let i = 769; i < 1000; i++) big.add(`m${i}`, hashId(`m${i}`));
    expect(big.index.migrating).to.equal(false);
    for (let i = 0; i < 1000; i++) expect(big.index.find(`m${i}`, hashId(`m${i}`))).to.equal(i < 769 && i % 7 === 0 ? -1 : i);
  });

  it('a growth that comes while the previous one is still moving finishes that one first', () => {
    const { index, add } = setup(16);
    for (let i = 0; i < 200; i++) add(`n${i}`, 9); // one long run of equal hashes through several growths
    expect(index.size).to.equal(200);
    for (let i = 0; i < 200; i++) expect(index.find(`n${i}`, 9)).to.equal(i);
  });

  it('clear() returns to the initial size and forgets everything', () => {
    const { index, add } = setup(16);
    for (let i = 0; i < 100; i++) add(`c${i}`, hashId(`c${i}`));
    index.clear();
    expect(index.size).to.equal(0);
    expect(index.buckets).to.equal(16);
    expect(index.migrating).to.equal(false);
    expect(index.find('c1', hashId('c1'))).to.equal(-1);
  });

  it('agrees with a Map over random inserts, deletes and lookups, with hashes forced to collide', () => {
    for (const spread of [1, 7, 64, 1 << 30]) {
      const rand = prng(spread);
      const { index, add } = setup(16);
      const model = new Map<string, number>();
      const hashOf = (id: string): number => hashId(id) % spread;
      for (let step = 0; step < 6000; step++) {
        const id = `r${Math.floor(rand() * 600)}`;
        const r = rand();
        if (r < 0.5) {
          if (!model.has(id)) model.set(id, add(id, hashOf(id)));
        } else if (r < 0.8) {
          expect(index.delete(id, hashOf(id)), `delete ${id}`).to.equal(model.get(id) ?? -1);
          model.delete(id);
        } else {
          expect(index.find(id, hashOf(id)), `find ${id}`).to.equal(model.get(id) ?? -1);
        }
        expect(index.size).to.equal(model.size);
      }
      for (const [id, ref] of model) expect(index.find(id, hashOf(id))).to.equal(ref);
    }
  });

  it('hashId: equal strings hash alike whatever their makeup; distinct ones rarely collide', () => {
    const made = ['job', '.', '42'].join('');
    expect(hashId(made)).to.equal(hashId('job.42'));
    expect(hashId('job.42'.slice(0))).to.equal(hashId('job.42'));
    const seen = new Set<number>();
    for (let i = 0; i < 100_000; i++) seen.add(hashId(`pend.${i & 3}.${i >> 2}`));
    expect(seen.size).to.be.greaterThan(99_990); // ~1 collision expected in 2^32 for 10^5 keys
    const h = hashId('é日本😀');
    expect(h).to.equal(h >>> 0); // an unsigned 32-bit integer
  });
});
