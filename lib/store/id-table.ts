// The job store's slots and their identifiers, both ways, with no JS object per job: slot ->
// identifier through refs[slot], the identifier's block in the byte arena (id-arena.ts);
// identifier -> slot through the index (id-index.ts), which finds the block, which holds the
// slot. Slots of removed identifiers are reused, the most recently freed first.
//
// Invariants:
// - slot s is in use  <=>  refs[s] !== NO_REF  <=>  the index maps the identifier in block
//   refs[s] to that block, and the block holds s. Free slots below `length` are on `freed`.
// - `length` (the slot high-water mark) only grows, except through clear(): slots are
//   positions for paged listings (lib/domain/page.ts). refs grows in place (growable.ts) and
//   is never read at or past `length`: a slot's ref is written when the slot is taken, so what
//   refs grew by is not filled (its pages are faulted in as slots come).
// - add() throws RangeError changing nothing: an identifier that is not well-formed UTF-16
//   (it would not survive UTF-8), over MAX_ID_BYTES, or past MAX_SLOTS identifiers.
import { IdArena, MAX_ID_BYTES, NO_REF } from './id-arena.ts';
import { growable, grown } from './growable.ts';
import { IdIndex, hashId, type RefKeys } from './id-index.ts';

/** Identifiers stored at most (the V8 Map the store used before held 2^24). */
export const MAX_SLOTS = 1 << 24;

export { hashId };

export class IdTable implements RefKeys {
  private readonly arena = new IdArena();
  private readonly index: IdIndex;
  private readonly initialSlots: number;
  private refs: Uint32Array;
  private freed: Int32Array;
  private freedCount = 0;
  private high = 0;

  constructor(initialSlots = 1024) {
    this.initialSlots = Math.min(MAX_SLOTS, Math.max(1, initialSlots));
    this.refs = growable(Uint32Array, this.initialSlots, MAX_SLOTS).fill(NO_REF);
    this.freed = new Int32Array(16);
    this.index = new IdIndex(this, this.initialSlots);
  }

  /** Identifiers stored. */
  get size(): number {
    return this.index.size;
  }

  /** One past the highest slot ever used: listings walk slots 0..length-1. */
  get length(): number {
    return this.high;
  }

  /** The slot holding `id` (hash: hashId(id)), or -1. */
  find(id: string, hash: number): number {
    const ref = this.index.find(id, hash);
    return ref < 0 ? -1 : this.arena.slotOf(ref);
  }

  /** The slot the next add() will use. */
  nextSlot(): number {
    return this.freedCount > 0 ? this.freed[this.freedCount - 1]! : this.high;
  }

  /**
   * Stores `id` (not stored yet; hash: hashId(id)) in nextSlot() and returns that slot. Throws
   * RangeError, changing nothing, for an identifier the table cannot hold or at capacity.
   */
  add(id: string, hash: number): number {
    const bytes = Buffer.byteLength(id, 'utf8');
    if (bytes !== id.length && !id.isWellFormed()) throw new RangeError('identifier is not well-formed UTF-16');
    if (bytes > MAX_ID_BYTES) throw new RangeError(`identifier of ${bytes} bytes: the store holds at most ${MAX_ID_BYTES}`);
    const slot = this.nextSlot();
    const reused = slot !== this.high;
    if (!reused) {
      if (slot >= MAX_SLOTS) throw new RangeError(`job store full (${MAX_SLOTS} jobs)`);
      this.ensureSlots(slot + 1); // may throw: nothing changed yet
    }
    this.index.reserve(); // may throw: nothing changed yet
    const ref = this.arena.add(id, bytes, slot); // may throw: nothing changed yet
    this.refs[slot] = ref;
    this.index.insert(hash, ref);
    if (reused) this.freedCount--;
    else this.high++;
    return slot;
  }

  /** Removes `id` (hash: hashId(id)) and returns the slot it had, or -1 when it is not stored. */
  remove(id: string, hash: number): number {
    const ref = this.index.delete(id, hash);
    if (ref < 0) return -1;
    const slot = this.arena.slotOf(ref);
    this.arena.free(ref);
    this.refs[slot] = NO_REF;
    if (this.freedCount === this.freed.length) {
      const grown = new Int32Array(this.freed.length * 2);
      grown.set(this.freed);
      this.freed = grown;
    }
    this.freed[this.freedCount++] = slot;
    return slot;
  }

  /** Whether `slot` holds an identifier. */
  inUse(slot: number): boolean {
    return slot >= 0 && slot < this.high && this.refs[slot] !== NO_REF;
  }

  /** The identifier in a slot in use, as a new string. */
  idAt(slot: number): string {
    return this.arena.read(this.refs[slot]!);
  }

  /** Whether the identifier in a slot in use starts with the UTF-8 bytes `prefix`. */
  startsWith(slot: number, prefix: Uint8Array): boolean {
    return this.arena.startsWith(this.refs[slot]!, prefix);
  }

  /** RefKeys: whether block `ref` holds `id`. */
  matches(ref: number, id: string): boolean {
    return this.arena.equals(ref, id);
  }

  /** Forgets every identifier and slot. */
  clear(): void {
    this.arena.clear();
    this.index.clear();
    this.refs = growable(Uint32Array, this.initialSlots, MAX_SLOTS).fill(NO_REF);
    this.freed = new Int32Array(16);
    this.freedCount = 0;
    this.high = 0;
  }

  /** Bytes of the growable column (refs; growable.ts: not in process.memoryUsage().arrayBuffers). */
  get columnBytes(): number {
    return this.refs.byteLength;
  }

  /** Off-heap bytes held, by part (bench/store.ts, tests). */
  usage(): { readonly slotBytes: number; readonly indexBytes: number; readonly arenaBytes: number; readonly arenaFreeBytes: number } {
    const a = this.arena.usage();
    return {
      slotBytes: this.refs.byteLength + this.freed.byteLength,
      indexBytes: this.index.buckets * 8,
      arenaBytes: a.chunkBytes,
      arenaFreeBytes: a.freeBytes,
    };
  }

  private ensureSlots(n: number): void {
    if (n <= this.refs.length) return;
    this.refs = grown(this.refs, Math.min(MAX_SLOTS, Math.max(n, this.refs.length * 2)));
  }
}
