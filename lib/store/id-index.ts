// The job store's index from identifier to its block in the byte arena (id-arena.ts, which
// keeps the slot in the block): open addressing with linear probing over one Uint32Array of
// (hash, ref + 1) pairs, outside the JS heap. The attempt records (attempts.ts) find their
// slots with it too.
//
// Why not a Map<string, number>: with a million jobs the Map and its million keys are the
// bulk of what a major GC marks, its lookups were ~30 % of the primary's CPU under a SET
// load, and its growth rehashes every entry in one go. Here a probe reads the pair at the
// home bucket (one cache line for the next 7 too) and compares the stored 32-bit hash first:
// the identifier's bytes (the owner's `keys.matches`) are only read on a hash match, and a
// hit costs two cache misses, the bucket and the block.
//
// Growth without a pause: past 3/4 full the index allocates a table twice the size and from
// then on moves MIGRATE_STEP buckets of the old table into it per insert or delete, while
// lookups look in both; the move is over long before the new table fills (it would be
// finished at once then). Deletion shifts the following entries of the run back (no
// tombstones), so a lookup that meets an empty bucket is done.
//
// Invariants:
// - an entry sits at or after its home bucket (hash & mask) with no empty bucket between
//   (cyclically); every ref is in at most one entry, in exactly one of the two tables; a
//   bucket whose second word is 0 is empty.
// - while migrating: `old` is the previous table. Its buckets are moved in cyclic order from
//   `start`, the bucket after one that was empty when the move began, so the `moved` buckets
//   from `start` on are empty and every entry left lies in the unmoved part, at or after its
//   home or, for a home in the moved part, at or after the first unmoved bucket. Nothing is
//   inserted into `old`.
// - hashes are seeded per process (hashId), so colliding identifiers cannot be precomputed.
import { randomBytes } from 'node:crypto';

/** The owner's identifier comparison: whether the block `ref` holds `id`. */
export interface RefKeys {
  matches(ref: number, id: string): boolean;
}

const SEED = randomBytes(4).readInt32LE(0);
const MIGRATE_STEP = 32;
const MIN_BUCKETS = 16;

/**
 * The 32-bit hash of an identifier's UTF-16 code units, two per 32-bit block: murmur3 (x86,
 * 32-bit) with a per-process seed. Unsigned.
 */
export function hashId(id: string): number {
  const n = id.length;
  let h = SEED;
  let i = 0;
  for (; i + 1 < n; i += 2) h = mixBlock(h, id.charCodeAt(i) | (id.charCodeAt(i + 1) << 16));
  if (i < n) h ^= mixKey(id.charCodeAt(i));
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function mixKey(k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}

function mixBlock(h: number, k: number): number {
  h ^= mixKey(k);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

export class IdIndex {
  private readonly keys: RefKeys;
  private readonly initialBuckets: number;
  private table: Uint32Array;
  private mask: number;
  private limit: number;
  private count = 0;
  private old: Uint32Array | null = null;
  private oldMask = 0;
  private start = 0;
  private moved = 0;

  constructor(keys: RefKeys, initialBuckets = 1024) {
    this.keys = keys;
    let n = MIN_BUCKETS;
    while (n < initialBuckets) n *= 2;
    this.initialBuckets = n;
    this.table = new Uint32Array(2 * n);
    this.mask = n - 1;
    this.limit = (n >> 2) * 3;
  }

  get size(): number {
    return this.count;
  }

  /** Buckets of the current table (for tests and benchmarks). */
  get buckets(): number {
    return this.mask + 1;
  }

  /** Whether a growth is still being carried out (for tests). */
  get migrating(): boolean {
    return this.old !== null;
  }

  /** The ref indexed under `id` (whose hashId is `hash`), or -1. */
  find(id: string, hash: number): number {
    const at = probe(this.table, this.mask, this.mask & hash, hash, id, this.keys);
    if (at >= 0 || this.old === null) return at < 0 ? -1 : this.table[2 * at + 1]! - 1;
    const old = this.old;
    const o = probe(old, this.oldMask, this.oldHome(hash), hash, id, this.keys);
    return o < 0 ? -1 : old[2 * o + 1]! - 1;
  }

  /**
   * Makes room for one more entry: may allocate a bigger table (and throw RangeError if it
   * cannot, changing nothing). insert() calls it; callers that must not fail between two
   * steps call it first.
   */
  reserve(): void {
    if (this.count < this.limit) return;
    const n = 2 * (this.mask + 1);
    const next = new Uint32Array(2 * n); // may throw: nothing changed yet
    this.finishMigration();
    const old = this.table;
    const oldMask = this.mask;
    let empty = 0;
    while (old[2 * empty + 1] !== 0) empty++; // exists: the table is at most 3/4 full
    this.old = old;
    this.oldMask = oldMask;
    this.start = (empty + 1) & oldMask;
    this.moved = 0;
    this.table = next;
    this.mask = n - 1;
    this.limit = (n >> 2) * 3;
  }

  /** Indexes block `ref` under `hash`. Its identifier must not be indexed yet. */
  insert(hash: number, ref: number): void {
    this.reserve();
    place(this.table, this.mask, hash, ref);
    this.count++;
    this.migrate();
  }

  /** Removes the entry of `id` and returns its ref, or -1 when `id` is not indexed. */
  delete(id: string, hash: number): number {
    let ref = -1;
    const at = probe(this.table, this.mask, this.mask & hash, hash, id, this.keys);
    if (at >= 0) {
      ref = this.table[2 * at + 1]! - 1;
      unlink(this.table, this.mask, at);
    } else if (this.old !== null) {
      const o = probe(this.old, this.oldMask, this.oldHome(hash), hash, id, this.keys);
      if (o >= 0) {
        ref = this.old[2 * o + 1]! - 1;
        unlink(this.old, this.oldMask, o);
      }
    }
    if (ref < 0) return -1;
    this.count--;
    this.migrate();
    return ref;
  }

  /** Removes every entry and returns to the initial size. */
  clear(): void {
    this.table = new Uint32Array(2 * this.initialBuckets);
    this.mask = this.initialBuckets - 1;
    this.limit = (this.initialBuckets >> 2) * 3;
    this.count = 0;
    this.old = null;
  }

  /** Where a lookup in the old table begins: the home, or the first unmoved bucket if the home was moved. */
  private oldHome(hash: number): number {
    const home = hash & this.oldMask;
    return ((home - this.start) & this.oldMask) < this.moved ? (this.start + this.moved) & this.oldMask : home;
  }

  /** Moves up to MIGRATE_STEP buckets of the old table into the current one. */
  private migrate(): void {
    const old = this.old;
    if (old === null) return;
    const n = this.oldMask + 1;
    const end = Math.min(n, this.moved + MIGRATE_STEP);
    for (; this.moved < end; this.moved++) {
      const b = 2 * ((this.start + this.moved) & this.oldMask);
      const ref1 = old[b + 1]!;
      if (ref1 === 0) continue;
      place(this.table, this.mask, old[b]!, ref1 - 1);
      old[b + 1] = 0;
    }
    if (this.moved === n) this.old = null;
  }

  private finishMigration(): void {
    while (this.old !== null) this.migrate();
  }
}

/** The bucket holding `id` in `table`, probing from `from`, or -1. */
function probe(table: Uint32Array, mask: number, from: number, hash: number, id: string, keys: RefKeys): number {
  for (let b = from; ; b = (b + 1) & mask) {
    const ref1 = table[2 * b + 1]!;
    if (ref1 === 0) return -1;
    if (table[2 * b] === hash && keys.matches(ref1 - 1, id)) return b;
  }
}

/** Puts (hash, ref) in the first empty bucket from its home. */
function place(table: Uint32Array, mask: number, hash: number, ref: number): void {
  let b = hash & mask;
  while (table[2 * b + 1] !== 0) b = (b + 1) & mask;
  table[2 * b] = hash;
  table[2 * b + 1] = ref + 1;
}

/**
 * Empties bucket `at` and shifts back each later entry of the run that may sit there (its
 * home is not between the hole and itself), so that no lookup is cut short by the hole.
 */
function unlink(table: Uint32Array, mask: number, at: number): void {
  let hole = at;
  for (let b = (at + 1) & mask; ; b = (b + 1) & mask) {
    const ref1 = table[2 * b + 1]!;
    if (ref1 === 0) break;
    const hash = table[2 * b]!;
    if (((b - (hash & mask)) & mask) >= ((b - hole) & mask)) {
      table[2 * hole] = hash;
      table[2 * hole + 1] = ref1;
      hole = b;
    }
  }
  table[2 * hole] = 0;
  table[2 * hole + 1] = 0;
}
