// DueHeap: exact i64 order through the (hi, lo) split, FIFO among equal times, O(log n)
// removal by handle, growth, popDue, and a randomized run against a sorted-array model.
import { expect } from 'chai';
import { DueHeap } from '../../../lib/store/heap.ts';
import { prng } from '../../helpers/prng.ts';

const I64_MAX = 9223372036854775807n;
const I64_MIN = -9223372036854775808n;

function arm(heap: DueHeap, h: number, key: bigint): void {
  heap.setKey(h, key);
  heap.insert(h);
}

function drain(heap: DueHeap): number[] {
  const out: number[] = [];
  for (let h = heap.pop(); h !== -1; h = heap.pop()) out.push(h);
  return out;
}

describe('store/heap DueHeap', () => {
  it('is empty at first', () => {
    const heap = new DueHeap();
    expect(heap.size).to.equal(0);
    expect(heap.peek()).to.equal(-1);
    expect(heap.peekKey()).to.equal(undefined);
    expect(heap.pop()).to.equal(-1);
    expect(heap.popDue(I64_MAX, 10)).to.deep.equal([]);
  });

  it('keeps keys exactly, across the sign and 2^32 boundaries', () => {
    const heap = new DueHeap();
    const keys = [I64_MIN, -4294967297n, -4294967296n, -4294967295n, -1n, 0n, 1n, 4294967295n,
      4294967296n, 4294967297n, 1775822400123456789n, I64_MAX];
    keys.forEach((k, h) => heap.setKey(h, k));
    keys.forEach((k, h) => expect(heap.keyOf(h)).to.equal(k));
  });

  it('orders exactly like the i64s, across the sign and 2^32 boundaries', () => {
    const heap = new DueHeap();
    const keys = [1775822400123456789n, 4294967296n, I64_MAX, -1n, 0n, -4294967296n, I64_MIN,
      4294967295n, 1775822400123456788n, -4294967297n, 1n];
    keys.forEach((k, h) => arm(heap, h, k));
    expect(heap.size).to.equal(keys.length);
    expect(heap.peekKey()).to.equal(I64_MIN);
    const sorted = keys.map((k, h) => [k, h] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, h]) => h);
    expect(drain(heap)).to.deep.equal(sorted);
  });

  it('rejects a key outside i64 and a bad handle, changing nothing', () => {
    const heap = new DueHeap();
    arm(heap, 0, 5n);
    expect(() => heap.setKey(0, I64_MAX + 1n)).to.throw(RangeError);
    expect(() => heap.setKey(1, I64_MIN - 1n)).to.throw(RangeError);
    expect(() => heap.insert(-1)).to.throw(RangeError);
    expect(() => heap.insert(1.5)).to.throw(RangeError);
    expect(heap.keyOf(0)).to.equal(5n);
    expect(heap.size).to.equal(1);
  });

  it('pops equal times in arming order (FIFO)', () => {
    const heap = new DueHeap();
    const order = [7, 3, 9, 0, 42, 5];
    for (const h of order) arm(heap, h, 5n);
    arm(heap, 1, 4n);
    expect(drain(heap)).to.deep.equal([1, ...order]);
  });

  it('grows past its initial capacity, keeping keys and order', () => {
    const heap = new DueHeap(1);
    for (let h = 0; h < 3000; h += 3) arm(heap, h, BigInt(-h));
    expect(heap.capacity).to.be.greaterThan(2997);
    expect(heap.keyOf(2997)).to.equal(-2997n);
    expect(heap.peek()).to.equal(2997);
    expect(heap.size).to.equal(1000);
  });

  it('removes an arbitrary handle and keeps the order of the rest', () => {
    const heap = new DueHeap();
    [7n, 3n, 9n, 1n, 5n, 8n, 2n].forEach((k, h) => arm(heap, h, k));
    expect(heap.remove(1)).to.equal(true); // key 3
    expect(heap.remove(3)).to.equal(true); // key 1, the top
    expect(heap.remove(3)).to.equal(false);
    expect(heap.remove(99)).to.equal(false);
    expect(heap.has(3)).to.equal(false);
    expect(drain(heap).map((h) => heap.keyOf(h))).to.deep.equal([2n, 5n, 7n, 8n, 9n]);
  });

  it('setKey on an armed handle re-positions it and restarts its FIFO turn', () => {
    const heap = new DueHeap();
    arm(heap, 0, 10n); // a
    arm(heap, 1, 20n); // b
    arm(heap, 2, 30n); // c
    heap.setKey(2, 5n);
    expect(heap.peek()).to.equal(2);
    heap.setKey(2, 20n); // same time as b, re-armed later: after b
    heap.setKey(0, 25n);
    expect(drain(heap)).to.deep.equal([1, 2, 0]);
  });

  it('setKey on a disarmed handle does not arm it; insert of an armed one does not duplicate it', () => {
    const heap = new DueHeap();
    heap.setKey(0, 1n);
    expect(heap.size).to.equal(0);
    heap.insert(0);
    heap.insert(0);
    expect(heap.size).to.equal(1);
    expect(drain(heap)).to.deep.equal([0]);
  });

  it('popDue takes only due handles, in order, up to the limit', () => {
    const heap = new DueHeap();
    [30n, 10n, 20n, 10n, 40n].forEach((k, h) => arm(heap, h, k));
    expect(heap.popDue(9n, 10)).to.deep.equal([]);
    expect(heap.popDue(30n, 2)).to.deep.equal([1, 3]);
    expect(heap.popDue(30n, 0)).to.deep.equal([]);
    expect(heap.popDue(30n, 10)).to.deep.equal([2, 0]);
    arm(heap, 5, I64_MIN);
    expect(heap.popDue(I64_MIN - 1n, 10)).to.deep.equal([]); // a "now" before i64: nothing due
    expect(heap.popDue(I64_MAX + 1000n, 10)).to.deep.equal([5, 4]); // beyond i64: all due
  });

  it('popDue compares exactly near 2^32 boundaries', () => {
    const heap = new DueHeap();
    arm(heap, 0, 4294967296n);
    arm(heap, 1, -4294967296n);
    expect(heap.popDue(-4294967297n, 10)).to.deep.equal([]);
    expect(heap.popDue(-4294967296n, 10)).to.deep.equal([1]);
    expect(heap.popDue(4294967295n, 10)).to.deep.equal([]);
    expect(heap.popDue(4294967296n, 10)).to.deep.equal([0]);
  });

  it('clear disarms every handle and keeps keys', () => {
    const heap = new DueHeap();
    [1n, 2n, 3n].forEach((k, h) => arm(heap, h, k));
    heap.clear();
    expect(heap.size).to.equal(0);
    expect([0, 1, 2].some((h) => heap.has(h))).to.equal(false);
    expect(heap.keyOf(2)).to.equal(3n);
  });

  it('matches a sorted-array model over 20 000 random interleaved operations', () => {
    const rand = prng(0xdecaf);
    const heap = new DueHeap(8); // small, so growth happens during the run
    const HANDLES = 400;
    // The model: handle -> [key, arm order] for armed handles; arm order mirrors seq renewal.
    const model = new Map<number, [bigint, number]>();
    let armOrder = 0;
    const sortedModel = (): number[] => [...model]
      .sort((x, y) => (x[1][0] < y[1][0] ? -1 : x[1][0] > y[1][0] ? 1 : x[1][1] - y[1][1]))
      .map(([h]) => h);
    // Few distinct times around a 2^32 boundary so that ties (FIFO) and the split are exercised.
    const randomTime = (): bigint => 4294967296n + BigInt(Math.floor(rand() * 40)) - 20n;
    for (let step = 0; step < 20_000; step++) {
      const r = rand();
      const h = Math.floor(rand() * HANDLES);
      if (r < 0.35) {
        const k = randomTime();
        arm(heap, h, k);
        model.set(h, [k, armOrder++]);
      } else if (r < 0.55) {
        expect(heap.remove(h)).to.equal(model.delete(h));
      } else if (r < 0.7) {
        const k = randomTime();
        heap.setKey(h, k); // re-arms only when armed
        if (model.has(h)) model.set(h, [k, armOrder++]);
      } else if (r < 0.9) {
        const expected = sortedModel()[0] ?? -1;
        expect(heap.pop()).to.equal(expected);
        model.delete(expected);
      } else {
        const now = randomTime();
        const limit = Math.floor(rand() * 5);
        const expected = sortedModel().filter((x) => model.get(x)![0] <= now).slice(0, limit);
        expect(heap.popDue(now, limit)).to.deep.equal(expected);
        for (const x of expected) model.delete(x);
      }
      expect(heap.size).to.equal(model.size);
      expect(heap.peek()).to.equal(sortedModel()[0] ?? -1);
      if (step % 997 === 0) {
        for (let x = 0; x < HANDLES; x++) expect(heap.has(x)).to.equal(model.has(x));
      }
    }
    expect(drain(heap)).to.deep.equal(sortedModel());
  });
});
