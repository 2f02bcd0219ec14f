// An indexed binary min-heap of due times over integer handles (0, 1, 2, ...: the caller's
// slots). Ordered by (time, seq): earliest time first, and among equal times the smallest arm
// sequence first, so entries due at the same instant come out in the order they were armed.
//
// Layout (why typed arrays): one object per entry costs ~64 bytes on Node (no pointer
// compression) plus a 24-byte BigInt; a million entries then cost ~300 MB RSS. Here each
// handle costs 24 bytes in typed-array columns that the GC never scans. The i64 time is
// stored split as (hi: int32 = time >> 32, lo: uint32 = time mod 2^32), which orders exactly
// like the i64 and compares as plain numbers: no bigint comparison and no allocation on any
// sift. The split goes through an aliased scratch word, so storing a key allocates nothing;
// a bigint is only built when a time is read back (keyOf, peekKey).
//
// The columns grow in place (growable.ts) up to MAX_HANDLES: a doubling copied nothing, and
// faults the new pages in as handles come.
//
// Invariants:
// - pos[h] is h's index in `tree` plus one while h is armed, 0 otherwise (new elements of a grown
//   column are zero: not armed); tree[pos[h] - 1] === h.
// - a handle's key is kept after it is disarmed, so the owner may use keyOf() as its time
//   column for armed and disarmed handles alike.
// - seq is a double counter: exact up to 2^53 arms, so FIFO ties never break in practice.
// Sifting moves a hole instead of swapping: one tree write and one pos write per level.

import { I64_MAX, I64_MIN } from '../domain/time.ts';
import { growable, grown } from './growable.ts';
import { MAX_SLOTS } from './id-table.ts';

/** Handles a heap holds at most: the job store's slots (a schedule store holds fewer). */
export const MAX_HANDLES = MAX_SLOTS;
const NOT_ARMED = 0;

/*
 * Scratch word for splitting and joining i64s without allocating intermediate bigints: a
 * BigInt64Array element aliased by 32-bit views. Views use the platform byte order, the same
 * one the BigInt64Array uses, so only which half is high depends on it.
 */
const scratch64 = new BigInt64Array(1);
const scratchHi = new Int32Array(scratch64.buffer);
const scratchLo = new Uint32Array(scratch64.buffer);
scratch64[0] = 1n;
const LO = scratchLo[0] === 1 ? 0 : 1;
const HI = 1 - LO;

export class DueHeap {
  private hi: Int32Array;
  private lo: Uint32Array;
  private seq: Float64Array;
  private pos: Int32Array;
  private tree: Int32Array;
  private length = 0;
  private nextSeq = 0;

  constructor(initialCapacity = 1024) {
    const n = Math.min(MAX_HANDLES, Math.max(1, Math.floor(initialCapacity)));
    this.hi = growable(Int32Array, n, MAX_HANDLES);
    this.lo = growable(Uint32Array, n, MAX_HANDLES);
    this.seq = growable(Float64Array, n, MAX_HANDLES);
    this.pos = growable(Int32Array, n, MAX_HANDLES);
    this.tree = growable(Int32Array, n, MAX_HANDLES);
  }

  /** Number of armed handles. */
  get size(): number {
    return this.length;
  }

  /** Bytes of its columns (growable.ts: not in process.memoryUsage().arrayBuffers). */
  get bytes(): number {
    return this.hi.byteLength + this.lo.byteLength + this.seq.byteLength + this.pos.byteLength + this.tree.byteLength;
  }

  /** Handles below this need no growth. */
  get capacity(): number {
    return this.pos.length;
  }

  has(h: number): boolean {
    return h >= 0 && h < this.pos.length && this.pos[h] !== NOT_ARMED;
  }

  /**
   * Records `key` (an i64; anything else throws RangeError) as h's time. If h is armed it is
   * re-armed: re-positioned, with a fresh sequence (it queues behind entries already at `key`).
   */
  setKey(h: number, key: bigint): void {
    if (key < I64_MIN || key > I64_MAX) throw new RangeError(`due time ${key} is outside i64`);
    this.ensureCapacity(h);
    scratch64[0] = key;
    this.hi[h] = scratchHi[HI]!;
    this.lo[h] = scratchLo[LO]!;
    if (this.pos[h] !== NOT_ARMED) this.insert(h);
  }

  /** The last key recorded for h (0n if none was), armed or not. */
  keyOf(h: number): bigint {
    scratchHi[HI] = this.hi[h]!;
    scratchLo[LO] = this.lo[h]!;
    return scratch64[0]!;
  }

  /** Arms h at its recorded key with a fresh sequence; an armed h is re-armed. */
  insert(h: number): void {
    this.ensureCapacity(h);
    this.seq[h] = this.nextSeq++;
    const armedAt = this.pos[h]!;
    if (armedAt !== NOT_ARMED) {
      this.resift(h, armedAt - 1);
      return;
    }
    this.siftUp(h, this.length++);
  }

  /** Disarms h; returns whether it was armed. */
  remove(h: number): boolean {
    if (!this.has(h)) return false;
    const at = this.pos[h]! - 1;
    this.pos[h] = NOT_ARMED;
    const last = this.tree[--this.length]!;
    if (last !== h) this.resift(last, at);
    return true;
  }

  /** The earliest armed handle, or -1 when none is armed. */
  peek(): number {
    return this.length === 0 ? -1 : this.tree[0]!;
  }

  /** The key of the earliest armed handle, or undefined when none is armed. */
  peekKey(): bigint | undefined {
    return this.length === 0 ? undefined : this.keyOf(this.tree[0]!);
  }

  /**
   * Disarms and returns, earliest first, up to `limit` armed handles whose key is <= `now`.
   * `now` is split once; the loop then compares numbers only.
   */
  popDue(now: bigint, limit: number): number[] {
    const out: number[] = [];
    // "now" outside i64: nothing is due before I64_MIN, everything is due at or after I64_MAX.
    if (now < I64_MIN) return out;
    scratch64[0] = now > I64_MAX ? I64_MAX : now;
    const nowHi = scratchHi[HI]!;
    const nowLo = scratchLo[LO]!;
    while (this.length > 0 && out.length < limit) {
      const top = this.tree[0]!;
      const topHi = this.hi[top]!;
      if (topHi > nowHi || (topHi === nowHi && this.lo[top]! > nowLo)) break;
      out.push(this.pop());
    }
    return out;
  }

  /** Disarms and returns the earliest armed handle, or -1 when none is armed. */
  pop(): number {
    if (this.length === 0) return -1;
    const top = this.tree[0]!;
    this.pos[top] = NOT_ARMED;
    const last = this.tree[--this.length]!;
    if (last !== top) this.siftDown(last, 0);
    return top;
  }

  /** Disarms every handle (keys are kept). */
  clear(): void {
    for (let i = 0; i < this.length; i++) this.pos[this.tree[i]!] = NOT_ARMED;
    this.length = 0;
  }

  private ensureCapacity(h: number): void {
    if (!Number.isInteger(h) || h < 0) throw new RangeError(`heap handle ${h} is not a non-negative integer`);
    if (h < this.pos.length) return;
    if (h >= MAX_HANDLES) throw new RangeError(`heap handle ${h}: a heap holds at most ${MAX_HANDLES}`);
    let n = this.pos.length * 2;
    while (n <= h) n *= 2;
    n = Math.min(n, MAX_HANDLES);
    this.hi = grown(this.hi, n);
    this.lo = grown(this.lo, n);
    this.seq = grown(this.seq, n);
    this.pos = grown(this.pos, n);
    this.tree = grown(this.tree, n);
  }

  /** Places h (whose old place is the hole at `at`) up or down to where it belongs. */
  private resift(h: number, at: number): void {
    if (at > 0 && this.before(h, this.tree[(at - 1) >> 1]!)) this.siftUp(h, at);
    else this.siftDown(h, at);
  }

  private siftUp(h: number, at: number): void {
    const tree = this.tree;
    const pos = this.pos;
    while (at > 0) {
      const p = (at - 1) >> 1;
      const parent = tree[p]!;
      if (!this.before(h, parent)) break;
      tree[at] = parent;
      pos[parent] = at + 1;
      at = p;
    }
    tree[at] = h;
    pos[h] = at + 1;
  }

  private siftDown(h: number, at: number): void {
    const tree = this.tree;
    const pos = this.pos;
    const n = this.length;
    const half = n >> 1; // indices at or past `half` are leaves
    while (at < half) {
      let c = 2 * at + 1;
      let child = tree[c]!;
      const r = c + 1;
      if (r < n && this.before(tree[r]!, child)) {
        c = r;
        child = tree[r]!;
      }
      if (!this.before(child, h)) break;
      tree[at] = child;
      pos[child] = at + 1;
      at = c;
    }
    tree[at] = h;
    pos[h] = at + 1;
  }

  /** Strict (time, seq) order on handles. */
  private before(a: number, b: number): boolean {
    const ha = this.hi[a]!;
    const hb = this.hi[b]!;
    if (ha !== hb) return ha < hb;
    const la = this.lo[a]!;
    const lb = this.lo[b]!;
    if (la !== lb) return la < lb;
    return this.seq[a]! < this.seq[b]!;
  }
}
