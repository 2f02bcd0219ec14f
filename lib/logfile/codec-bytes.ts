// The byte primitives of the record codec (codec.ts): string and list sizes, checked against
// what the logfile holds, and big-endian i64 and `str` writers. Apart from codec.ts because
// the extension layouts (retry-codec.ts) write the same fields the same way.
import { MAX_LIST_ITEMS, MAX_STRING_BYTES } from '../domain/limits.ts';
import { RecordEncodeError } from './codec-errors.ts';

// Short ASCII strings (identifiers) are the common case; a JS loop beats a native call there.
function utf8Length(s: string): number {
  if (s.length > 64) return Buffer.byteLength(s, 'utf8');
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s, 'utf8');
  }
  return s.length;
}

export function strSize(s: string, what: string): number {
  const n = utf8Length(s);
  if (n > MAX_STRING_BYTES) throw new RecordEncodeError('string_too_long', `${what} is ${n} bytes; the logfile holds at most ${MAX_STRING_BYTES}`);
  return 2 + n;
}

export function listSize(items: readonly string[], what: string): number {
  if (items.length > MAX_LIST_ITEMS) throw new RecordEncodeError('list_too_long', `${what} has ${items.length} items; the logfile holds at most ${MAX_LIST_ITEMS}`);
  let size = 2;
  for (const item of items) size += strSize(item, `an element of ${what}`);
  return size;
}

// i64 through a typed-array scratch: several times faster than Buffer's BigInt accessors.
const scratch64 = new BigInt64Array(1);
const scratch8 = new Uint8Array(scratch64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function putI64(buf: Buffer, at: number, v: bigint): void {
  scratch64[0] = v;
  if (LITTLE_ENDIAN) {
    for (let i = 0; i < 8; i++) buf[at + i] = scratch8[7 - i]!;
  } else {
    for (let i = 0; i < 8; i++) buf[at + i] = scratch8[i]!;
  }
}

export function getI64(buf: Buffer, at: number): bigint {
  if (LITTLE_ENDIAN) {
    for (let i = 0; i < 8; i++) scratch8[7 - i] = buf[at + i]!;
  } else {
    for (let i = 0; i < 8; i++) scratch8[i] = buf[at + i]!;
  }
  return scratch64[0]!;
}

export function putStr(buf: Buffer, at: number, s: string): number {
  let n = s.length;
  if (n <= 64) {
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) break;
      buf[at + 2 + i] = c;
    }
    if (i < n) n = buf.write(s, at + 2, 'utf8');
  } else {
    n = buf.write(s, at + 2, 'utf8');
  }
  buf[at] = n >>> 8;
  buf[at + 1] = n & 0xff;
  return at + 2 + n;
}

export function putList(buf: Buffer, at: number, items: readonly string[]): number {
  buf[at] = items.length >>> 8;
  buf[at + 1] = items.length & 0xff;
  let p = at + 2;
  for (const item of items) p = putStr(buf, p, item);
  return p;
}
