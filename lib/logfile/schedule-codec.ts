// The body of a schedule record (doc/logfile-format.md, Extension records: type 5, needs 3):
// a schedule's whole state, as lib/domain/schedule.ts ScheduleState says. codec.ts frames it
// (type byte, needs) and calls here for the body; this file is the body's layout alone.
//
//   body  = id:str  timing  tz:str  flags:u8  [start:i64] [end:i64] [limit:u32]
//           jitter:i64 catchup:i64 missed:u8 overlap:u8 keep:u16
//           decided:i64 [next:i64] fired:u32 skipped_missed:u32 skipped_overlap:u32 [held:i64]
//           n:u16 fire:i64*n  m:u16 manual:i64*m  k:u8 skip*k
//   timing = 0x00 cron:str | 0x01 every:i64
//   flags  = bit 0 start, bit 1 end, bit 2 limit, bit 3 held, bit 4 paused, bit 5 next (others 0)
//   skip   = reason:u8 (0 missed, 1 overlap) from:i64 to:i64 count:u32
//   missed = 0 skip, 1 once, 2 all;  overlap = 0 allow, 1 skip, 2 queue
//
// Counters beyond u32 are stored as 2^32 - 1 (a count of skips that large says enough). The
// decoder is as strict as the rest: every byte used, every enumeration and flag known, and
// what readSchedule would refuse (no timing, an unknown policy) is damage.
import type { ScheduleState, SkipEntry, SkipReason } from '../domain/schedule.ts';
// A million schedules replayed share their zone names, expressions and empty lists (shared.ts).
import { intern, MISSED_POLICIES as MISSED, NO_SKIPS, NO_TIMES, OVERLAP_POLICIES as OVERLAP } from '../schedule/shared.ts';
import { isUtf8 } from 'node:buffer';
import { MAX_STRING_BYTES } from '../domain/limits.ts';
import { RecordEncodeError } from './codec-errors.ts';

const REASONS: readonly SkipReason[] = ['missed', 'overlap'];
const F_START = 1;
const F_END = 2;
const F_LIMIT = 4;
const F_HELD = 8;
const F_PAUSED = 16;
const F_NEXT = 32;
const U32_MAX = 0xffffffff;
const MAX_LIST = 0xffff;

/** What the layout is written through: once to size and check it, once into the frame's buffer. */
interface Out {
  u8(v: number): void;
  u16(v: number): void;
  u32(v: number): void;
  i64(v: bigint): void;
  str(s: string, what: string): void;
  list(items: readonly bigint[], what: string): void;
}

const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/** Counts the bytes, and refuses (RecordEncodeError) what the layout cannot hold, before anything is written. */
class Sizer implements Out {
  size = 0;
  u8(): void { this.size += 1; }
  u16(): void { this.size += 2; }
  u32(): void { this.size += 4; }
  i64(v: bigint): void {
    if (v < I64_MIN || v > I64_MAX) throw new RecordEncodeError('execution_out_of_range', `schedule instant ${v} is outside the signed 64-bit range`);
    this.size += 8;
  }
  str(s: string, what: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    if (n > MAX_STRING_BYTES) throw new RecordEncodeError('string_too_long', `${what} is ${n} bytes; the logfile holds at most ${MAX_STRING_BYTES}`);
    this.size += 2 + n;
  }
  list(items: readonly bigint[], what: string): void {
    if (items.length > MAX_LIST) throw new RecordEncodeError('list_too_long', `${what} has ${items.length} items; the logfile holds at most ${MAX_LIST}`);
    this.u16();
    for (const v of items) this.i64(v);
  }
}

/** Writes into the frame's buffer, which the Sizer's count made room for. */
class BufferOut implements Out {
  private readonly buf: Buffer;
  at: number;
  constructor(buf: Buffer, at: number) {
    this.buf = buf;
    this.at = at;
  }
  u8(v: number): void { this.buf[this.at++] = v; }
  u16(v: number): void { this.at = this.buf.writeUInt16BE(v, this.at); }
  u32(v: number): void { this.at = this.buf.writeUInt32BE(Math.min(U32_MAX, Math.max(0, v)), this.at); }
  i64(v: bigint): void { this.at = this.buf.writeBigInt64BE(v, this.at); }
  str(s: string): void {
    const at = this.at + 2;
    const n = this.buf.write(s, at, 'utf8');
    this.buf.writeUInt16BE(n, this.at);
    this.at = at + n;
  }
  list(items: readonly bigint[]): void {
    this.u16(items.length);
    for (const v of items) this.i64(v);
  }
}

/** Bytes the body of `st` takes; throws RecordEncodeError when it cannot be stored. */
export function scheduleBodySize(st: ScheduleState): number {
  const sizer = new Sizer();
  layout(st, sizer);
  return sizer.size;
}

/** Writes the body of `st` at `at` (room made by scheduleBodySize); returns the offset past it. */
export function writeScheduleBody(st: ScheduleState, buf: Buffer, at: number): number {
  const out = new BufferOut(buf, at);
  layout(st, out);
  return out.at;
}

function layout(st: ScheduleState, w: Out): void {
  const s = st.schedule;
  w.str(s.id, 'schedule identifier');
  if (s.cron !== null) {
    w.u8(0);
    w.str(s.cron, 'cron expression');
  } else {
    w.u8(1);
    w.i64(s.every!);
  }
  w.str(s.tz, 'time zone');
  w.u8((s.start !== null ? F_START : 0) | (s.end !== null ? F_END : 0) | (s.limit !== null ? F_LIMIT : 0) | (st.held !== null ? F_HELD : 0) | (s.paused ? F_PAUSED : 0) | (st.next !== null ? F_NEXT : 0));
  if (s.start !== null) w.i64(s.start);
  if (s.end !== null) w.i64(s.end);
  if (s.limit !== null) w.u32(s.limit);
  w.i64(s.jitter);
  w.i64(s.catchup);
  w.u8(MISSED.indexOf(s.missed));
  w.u8(OVERLAP.indexOf(s.overlap));
  w.u16(s.keep);
  w.i64(st.decided);
  if (st.next !== null) w.i64(st.next);
  w.u32(st.fired);
  w.u32(st.skippedMissed);
  w.u32(st.skippedOverlap);
  if (st.held !== null) w.i64(st.held);
  w.list(st.fires, 'schedule fires');
  w.list(st.manual, 'schedule manual runs');
  if (st.skips.length > 0xff) throw new RecordEncodeError('list_too_long', `schedule skips has ${st.skips.length} items; at most 255`);
  w.u8(st.skips.length);
  for (const k of st.skips) {
    w.u8(REASONS.indexOf(k.reason));
    w.i64(k.from);
    w.i64(k.to);
    w.u32(k.count);
  }
}

/** Why a body does not decode, and where (an index into the buffer handed in). */
export class BodyError extends Error {
  readonly at: number;
  constructor(at: number, reason: string) {
    super(reason);
    this.at = at;
  }
}

// The decoder's cursor: module state, as codec.ts keeps its own (decoding is synchronous and
// never re-entered), so that a million replayed schedules allocate no closures and build no
// message unless a byte is wrong.
let b: Buffer = Buffer.alloc(0);
let p = 0;
let stop = 0;

function need(n: number, what: string): void {
  if (p + n > stop) throw new BodyError(p, `${what} runs past the end of the record`);
}
function u8(what: string): number { need(1, what); return b[p++]!; }
function u16(what: string): number { need(2, what); const v = b.readUInt16BE(p); p += 2; return v; }
function u32(what: string): number { need(4, what); const v = b.readUInt32BE(p); p += 4; return v; }
function i64(what: string): bigint {
  need(8, what);
  // Most instants and durations of a schedule are 0 (jitter): no new bigint for those.
  const v = b.readUInt32BE(p) === 0 && b.readUInt32BE(p + 4) === 0 ? 0n : b.readBigInt64BE(p);
  p += 8;
  return v;
}
function str(what: string): string {
  const len = u16(what);
  need(len, what);
  let ascii = true;
  for (let i = p; i < p + len; i++) if (b[i]! > 0x7f) { ascii = false; break; }
  if (!ascii && !isUtf8(b.subarray(p, p + len))) throw new BodyError(p, `${what} is not valid UTF-8`);
  const v = b.toString(ascii ? 'latin1' : 'utf8', p, p + len);
  p += len;
  return v;
}
function oneOf<T>(values: readonly T[], what: string): T {
  const at = p;
  const v = values[u8(what)];
  if (v === undefined) throw new BodyError(at, `unknown ${what} byte ${b[at]}`);
  return v;
}
function times(what: string): readonly bigint[] {
  const n = u16(what);
  if (n === 0) return NO_TIMES;
  const out = new Array<bigint>(n);
  for (let i = 0; i < n; i++) out[i] = i64(what);
  return out;
}

/** The schedule state in buf[from, end); throws BodyError unless every byte is used as the layout says. */
export function decodeScheduleBody(buf: Buffer, from: number, end: number): ScheduleState {
  b = buf;
  p = from;
  stop = end;
  try {
    return body();
  } finally {
    b = Buffer.alloc(0); // do not pin the caller's buffer
  }
}

function body(): ScheduleState {
  const id = str('schedule identifier');
  const timingAt = p;
  const timing = u8('schedule timing');
  if (timing > 1) throw new BodyError(timingAt, `unknown schedule timing byte ${timing}`);
  const cron = timing === 0 ? intern(str('cron expression')) : null;
  const every = timing === 1 ? i64('every') : null;
  const tz = intern(str('time zone'));
  const flagsAt = p;
  const flags = u8('schedule flags');
  if ((flags & ~(F_START | F_END | F_LIMIT | F_HELD | F_PAUSED | F_NEXT)) !== 0) throw new BodyError(flagsAt, `unknown schedule flags ${flags}`);
  const start = flags & F_START ? i64('start') : null;
  const end = flags & F_END ? i64('end') : null;
  const limit = flags & F_LIMIT ? u32('limit') : null;
  const jitter = i64('jitter');
  const catchup = i64('catchup');
  const missed = oneOf(MISSED, 'missed policy');
  const overlap = oneOf(OVERLAP, 'overlap policy');
  const keep = u16('keep');
  const decided = i64('decided');
  const next = flags & F_NEXT ? i64('next') : null;
  const fired = u32('fired');
  const skippedMissed = u32('skipped missed');
  const skippedOverlap = u32('skipped overlap');
  const held = flags & F_HELD ? i64('held') : null;
  const fires = times('schedule fires');
  const manual = times('schedule manual runs');
  const k = u8('count of schedule skips');
  let skips = NO_SKIPS;
  if (k > 0) {
    const read: SkipEntry[] = [];
    for (let i = 0; i < k; i++) read.push({ reason: oneOf(REASONS, 'skip reason'), from: i64('skip from'), to: i64('skip to'), count: u32('skip count') });
    skips = read;
  }
  if (p !== stop) throw new BodyError(p, `${stop - p} trailing bytes after the record`);
  return {
    schedule: { id, cron, every, tz, start, end, limit, jitter, missed, catchup, overlap, paused: (flags & F_PAUSED) !== 0, keep },
    decided, next, fired, skippedMissed, skippedOverlap, held, fires, manual, skips,
  };
}
