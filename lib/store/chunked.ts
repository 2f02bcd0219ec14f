// A column of JS values kept in chunks of CHUNK entries: it grows by a chunk and never copies
// what it holds. A JS array grown by push() copies its whole backing store each time it runs
// out (and faults in the new one's pages): in the primary that was one record() of 10-12 ms at
// ~100 000 attempt records (bench row schedules-spread). Reads and writes cost one more load.
const BITS = 12;
const CHUNK = 1 << BITS;
const MASK = CHUNK - 1;

export class Chunked<T> {
  private chunks: T[][] = [];
  private readonly empty: T;
  private count = 0;

  /** `empty`: what an entry holds until it is set. */
  constructor(empty: T) {
    this.empty = empty;
  }

  /** Entries held (the next push()'s index). */
  get length(): number {
    return this.count;
  }

  /** The entry at `i` (below length). */
  get(i: number): T {
    return this.chunks[i >>> BITS]![i & MASK]!;
  }

  /** Sets the entry at `i` (below length). */
  set(i: number, value: T): void {
    this.chunks[i >>> BITS]![i & MASK] = value;
  }

  /** Appends `value`; returns its index. */
  push(value: T): number {
    const i = this.count;
    if ((i & MASK) === 0) this.chunks.push(new Array<T>(CHUNK).fill(this.empty));
    this.chunks[i >>> BITS]![i & MASK] = value;
    this.count++;
    return i;
  }

  clear(): void {
    this.chunks = [];
    this.count = 0;
  }
}
