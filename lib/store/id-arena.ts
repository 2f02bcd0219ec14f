// The bytes of the job store's identifiers, outside the JS heap: each identifier is a block
// of 1 MiB chunks of off-heap memory, with its owner's slot and its length in front.
//
// Why: a million identifiers held as JS strings are a million heap objects, which every major
// GC marks and every scavenge that promotes them copies; here they are ~32 bytes each in a
// few dozen ArrayBuffers, which the GC never looks inside. A string is only built when an
// identifier is read back (a fired job, a listing).
//
// Why size classes and no compaction: a deleted identifier's block goes onto its class's free
// list and the next identifier of that class reuses it, so churn does not grow the arena and
// nothing is ever moved (compacting a big arena would be a pause of its own). Classes are
// 8-byte steps up to 64 bytes, then 4 per doubling (at most 25 % of a block unused); free
// blocks of one class are not lent to another, so the arena holds, per class, its peak
// number of blocks. Blocks never span chunks: the tail of a chunk too short for the next
// block is left unused (under 1 KiB per MiB for identifiers of tickd's 1 024 bytes).
//
// Invariants:
// - a block is named by its ref: its byte offset / 8 (blocks are 8-aligned); its chunk is
//   ref >>> REF_CHUNK_SHIFT. Refs stay below NO_REF, which is never a block.
// - a block in use holds its owner's slot (u32 LE), the identifier's UTF-8 length (u16 LE),
//   then the bytes: an index entry naming the block is enough both to compare an identifier
//   and to find its slot (one cache miss per lookup, no other array to read).
// - a free block holds the ref of the next free block of its class where the slot was, and
//   keeps its length; heads[c] is the first free block of class c, NO_REF for none.

/** Longest identifier the arena stores, in UTF-8 bytes (a block is at most 64 KiB). */
export const MAX_ID_BYTES = 65_530;
/** A ref no block has: "none". */
export const NO_REF = 0xffffffff;

/** Bytes in front of the identifier: slot (u32) and length (u16). */
const HEADER = 6;
const CHUNK_SHIFT = 20; // 1 MiB chunks
const CHUNK_BYTES = 1 << CHUNK_SHIFT;
const REF_CHUNK_SHIFT = CHUNK_SHIFT - 3;
const REF_OFFSET_MASK = (1 << REF_CHUNK_SHIFT) - 1;
/** Chunks at most, so that every ref of the last one stays below NO_REF: 32 GiB. */
const MAX_CHUNKS = NO_REF >>> REF_CHUNK_SHIFT;

/** Block sizes: 8, 16, ..., 64, then 80, 96, 112, 128, 160, ... 65 536. */
export const CLASS_SIZES: readonly number[] = (() => {
  const sizes: number[] = [];
  for (let s = 8; s <= 64; s += 8) sizes.push(s);
  for (let base = 64; base < 65_536; base *= 2) for (let q = 1; q <= 4; q++) sizes.push(base + q * (base / 4));
  return sizes;
})();

/** The smallest class whose blocks hold `bytes` (1..65 536). */
export function classOf(bytes: number): number {
  if (bytes <= 64) return bytes <= 8 ? 0 : ((bytes + 7) >> 3) - 1;
  const p = 31 - Math.clz32(bytes - 1); // 2^p < bytes <= 2^(p+1), p >= 6
  const step = 1 << (p - 2);
  return 8 + (p - 6) * 4 + Math.ceil((bytes - (1 << p)) / step) - 1;
}

export class IdArena {
  private chunks: Buffer[] = [];
  /** Bytes handed out from the last chunk (bump pointer); CHUNK_BYTES when there is none. */
  private top = CHUNK_BYTES;
  private readonly heads = new Array<number>(CLASS_SIZES.length).fill(NO_REF);
  private blockBytes = 0;
  private freeBytes = 0;
  /** Scratch for comparing non-ASCII identifiers as UTF-8 (grown on demand). */
  private scratch = Buffer.allocUnsafeSlow(1024);

  /**
   * Stores identifier `id` of `byteLength` UTF-8 bytes for `slot` and returns its block: a
   * free one of its class, else the next one in the last chunk, else the first of a new
   * chunk. Throws RangeError (nothing changed) above MAX_ID_BYTES or when the arena is full.
   */
  add(id: string, byteLength: number, slot: number): number {
    if (!(byteLength >= 0 && byteLength <= MAX_ID_BYTES)) throw new RangeError(`identifier of ${byteLength} bytes: the store holds at most ${MAX_ID_BYTES}`);
    const c = classOf(HEADER + byteLength);
    const size = CLASS_SIZES[c]!;
    let ref = this.heads[c]!;
    if (ref !== NO_REF) {
      this.heads[c] = this.slotOf(ref); // a free block's link
      this.freeBytes -= size;
    } else {
      if (this.top + size > CHUNK_BYTES) {
        if (this.chunks.length >= MAX_CHUNKS) throw new RangeError('identifier arena full');
        this.chunks.push(Buffer.allocUnsafeSlow(CHUNK_BYTES)); // may throw: nothing changed yet
        this.top = 0;
      }
      ref = (((this.chunks.length - 1) << REF_CHUNK_SHIFT) | (this.top >>> 3)) >>> 0;
      this.top += size;
      this.blockBytes += size;
    }
    const chunk = this.chunks[ref >>> REF_CHUNK_SHIFT]!;
    const at = (ref & REF_OFFSET_MASK) << 3;
    chunk.writeUInt32LE(slot, at);
    chunk.writeUInt16LE(byteLength, at + 4);
    chunk.write(id, at + HEADER, byteLength, 'utf8');
    return ref;
  }

  /** Returns a block to its class's free list. */
  free(ref: number): void {
    const c = classOf(HEADER + this.lengthOf(ref));
    this.chunks[ref >>> REF_CHUNK_SHIFT]!.writeUInt32LE(this.heads[c]!, (ref & REF_OFFSET_MASK) << 3);
    this.heads[c] = ref;
    this.freeBytes += CLASS_SIZES[c]!;
  }

  /** The slot stored with a block in use. */
  slotOf(ref: number): number {
    const chunk = this.chunks[ref >>> REF_CHUNK_SHIFT]!;
    const at = (ref & REF_OFFSET_MASK) << 3;
    return (chunk[at]! | (chunk[at + 1]! << 8) | (chunk[at + 2]! << 16) | (chunk[at + 3]! << 24)) >>> 0;
  }

  /** The UTF-8 length of a block's identifier. */
  lengthOf(ref: number): number {
    const chunk = this.chunks[ref >>> REF_CHUNK_SHIFT]!;
    const at = (ref & REF_OFFSET_MASK) << 3;
    return chunk[at + 4]! | (chunk[at + 5]! << 8);
  }

  /** The identifier stored in the block, as a new string. */
  read(ref: number): string {
    const chunk = this.chunks[ref >>> REF_CHUNK_SHIFT]!;
    const at = ((ref & REF_OFFSET_MASK) << 3) + HEADER;
    return chunk.toString('utf8', at, at + (chunk[at - 2]! | (chunk[at - 1]! << 8)));
  }

  /**
   * Whether the block holds exactly `id`. ASCII identifiers (all of tickd's) compare code
   * unit to byte; anything else is encoded once into scratch space and compared byte-wise.
   */
  equals(ref: number, id: string): boolean {
    const chunk = this.chunks[ref >>> REF_CHUNK_SHIFT]!;
    const at = ((ref & REF_OFFSET_MASK) << 3) + HEADER;
    const byteLength = chunk[at - 2]! | (chunk[at - 1]! << 8);
    const n = id.length;
    if (n === byteLength) {
      let i = 0;
      for (; i < n; i++) {
        const c = id.charCodeAt(i);
        if (c >= 0x80) break; // not ASCII: a code unit may equal a byte of another character
        if (c !== chunk[at + i]) return false;
      }
      if (i === n) return true;
    }
    // UTF-8 takes as many bytes as UTF-16 units for ASCII and more for anything else.
    if (n >= byteLength || !id.isWellFormed()) return false;
    if (Buffer.byteLength(id, 'utf8') !== byteLength) return false;
    if (this.scratch.length < byteLength) this.scratch = Buffer.allocUnsafeSlow(byteLength);
    this.scratch.write(id, 0, byteLength, 'utf8');
    return this.scratch.compare(chunk, at, at + byteLength, 0, byteLength) === 0;
  }

  /** Whether the block's identifier starts with the UTF-8 bytes `prefix`. */
  startsWith(ref: number, prefix: Uint8Array): boolean {
    const chunk = this.chunks[ref >>> REF_CHUNK_SHIFT]!;
    const at = ((ref & REF_OFFSET_MASK) << 3) + HEADER;
    const n = prefix.length;
    if (n > (chunk[at - 2]! | (chunk[at - 1]! << 8))) return false;
    for (let i = 0; i < n; i++) if (chunk[at + i] !== prefix[i]) return false;
    return true;
  }

  /** Drops every block and chunk. */
  clear(): void {
    this.chunks = [];
    this.top = CHUNK_BYTES;
    this.heads.fill(NO_REF);
    this.blockBytes = 0;
    this.freeBytes = 0;
  }

  /** Sizes for benchmarks and tests: chunks allocated, bytes in blocks, of them free. */
  usage(): { readonly chunks: number; readonly chunkBytes: number; readonly blockBytes: number; readonly freeBytes: number } {
    return { chunks: this.chunks.length, chunkBytes: this.chunks.length * CHUNK_BYTES, blockBytes: this.blockBytes, freeBytes: this.freeBytes };
  }
}
