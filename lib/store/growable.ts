// Typed-array columns that grow in place: views over a growable SharedArrayBuffer (ES2024)
// whose address space is reserved, at creation, for the most the column may ever hold. Growing
// commits more of it and copies nothing; its pages are faulted in one at a time as the new
// elements are first written, a little per insert. Shared only for that: such a buffer can grow
// and never shrink, so a view of a fixed length over it is as fast as any typed array (a
// length-tracking view over a resizable ArrayBuffer popped the job heap ~15 % slower, bench/store.ts);
// nothing is shared with another thread.
//
// Why: the stores doubled their columns by allocating new arrays and copying, in one call. The
// new arrays' page faults dominate that (about 3 ms a MB on this project's machines): a job store
// passing 131 072, 262 144, 524 288 and 1 048 576 jobs held the primary for 15-18, 27-34, 56-72
// and 114-152 ms, each a turn of the tick loop (100 000 every-minute schedules keeping 10
// occurrences each pass all four in their first ten minutes). Reserved address space is not
// memory: RSS grows with the pages written, as before.
//
// New elements are zero; a column whose empty value is not zero fills what it grew by, or stores
// its values so that zero means empty.

type Column = Int32Array | Uint32Array | Float64Array | Uint8Array;

export interface ColumnType<T extends Column> {
  new (buffer: SharedArrayBuffer, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/** A column of `length` zeros that can grow to `maxLength` elements. */
export function growable<T extends Column>(type: ColumnType<T>, length: number, maxLength: number): T {
  if (!(length <= maxLength)) throw new RangeError(`a column of ${length} elements cannot be at most ${maxLength}`);
  const bytes = type.BYTES_PER_ELEMENT;
  return new type(new SharedArrayBuffer(length * bytes, { maxByteLength: maxLength * bytes }), 0, length);
}

/**
 * `column` (made by growable) grown to `length` elements, the new ones zero: a new view of the
 * same memory, the old one still valid. RangeError past its most.
 */
export function grown<T extends Column>(column: T, length: number): T {
  const buffer = column.buffer as SharedArrayBuffer;
  buffer.grow(length * column.BYTES_PER_ELEMENT);
  return new (column.constructor as ColumnType<T>)(buffer, 0, length);
}
