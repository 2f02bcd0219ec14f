import { expect } from 'chai';
import { growable, grown } from '../../../lib/store/growable.ts';
import { DueHeap, MAX_HANDLES } from '../../../lib/store/heap.ts';

describe('store/growable', () => {
  it('grows a column in place: values kept, the new elements zero, nothing copied', () => {
    const a = growable(Int32Array, 4, 1 << 20);
    a.set([1, 2, 3, 4]);
    const b = grown(a, 1 << 16);
    expect(b.length).to.equal(1 << 16);
    expect([...b.subarray(0, 4)]).to.deep.equal([1, 2, 3, 4]);
    expect(b.subarray(4).every((x) => x === 0)).to.equal(true);
    // The same memory: a write through the new view shows through the old one.
    b[2] = 42;
    expect(a[2]).to.equal(42);
    expect(b.buffer).to.equal(a.buffer);
  });

  it('keeps each kind of column, Float64 and Uint8 alike', () => {
    const f = grown(growable(Float64Array, 1, 8), 8);
    expect(f).to.be.instanceOf(Float64Array);
    expect(f.length).to.equal(8);
    const u = grown(growable(Uint8Array, 1, 8), 3);
    expect(u).to.be.instanceOf(Uint8Array);
    expect(u.byteLength).to.equal(3);
  });

  it('refuses to grow past its most, and a column longer than its most', () => {
    const a = growable(Uint32Array, 2, 4);
    expect(() => grown(a, 5)).to.throw(RangeError);
    expect(grown(a, 4).length).to.equal(4);
    expect(() => growable(Uint32Array, 5, 4)).to.throw(RangeError);
  });

  it('a heap whose columns grew many times keeps its order and its disarmed handles', () => {
    const heap = new DueHeap(1);
    const n = 5000;
    for (let h = n - 1; h >= 0; h -= 2) {
      heap.setKey(h, BigInt((h * 7919) % n));
      heap.insert(h);
    }
    // Handles never armed, in the grown part, read as not armed.
    expect(heap.has(0)).to.equal(false);
    expect(heap.has(n - 2)).to.equal(false);
    expect(heap.capacity).to.be.at.least(n);
    const popped: bigint[] = [];
    for (let h; (h = heap.pop()) >= 0;) popped.push(heap.keyOf(h));
    expect(popped.length).to.equal(n / 2);
    expect(popped).to.deep.equal([...popped].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    expect(() => heap.insert(MAX_HANDLES)).to.throw(RangeError);
  });
});
