// What records of type 7 and 8 add to types 0 and 1 (doc/logfile-format.md, Extension records,
// needs 4, 5 with `retry.on`, 6 with `on`): a job's retry state, a rule's options
// (lib/domain/rule-options.ts).
// codec.ts writes what they share with ztick's records (id execution status; id pattern
// runner) and calls here for the rest, which ends the record: this file is that tail's layout
// alone.
//
//   job tail = attempt:u32 flags:u8 [retry_at:i64]              flags: bit 0 retry_at (others 0)
//   options  = flags:u8 [retry] [concurrency:u32] [rate] [retry.on] [on]
//              flags: bit 0 retry, bit 1 concurrency, bit 2 rate, bit 3 retry.on (format 5;
//              with bit 0 only), bit 4 on (format 6)
//   retry    = attempts:u16 backoff:u8 delay:i64 factor:f64 max_delay:i64 jitter:f64
//              backoff = 0 fixed, 1 exponential
//   rate     = limit:u32 per:i64
//   retry.on = count:u8 (kind:u8 value:u16)*count                 the retry policy's failure
//              classes in their order; kind = index in RETRY_CLASS_KINDS (0 exit, 1 exit:N,
//              2 signal, 3 4xx, 4 5xx, 5 NNN, 6 network, 7 broker, 8 runner); value = N or
//              NNN, 0 for the other kinds
//   on       = count:u16 tag:str*count                            the node tags the rule's jobs
//              require, in their order (the codec's list, as a direct runner's arguments)
//
// Strict as the rest: every byte used, every flag and enumeration known, attempts counted from
// 1, and options readRuleOptions would refuse (or none at all: a rule without options has no
// such record) are damage, not values to run with; so are a class list that is empty, longer
// than 32 or names a class twice, a value out of its kind's range, bit 3 in a record that
// says it needs format 4 (no writer of format 4 sets it), tags that readTags refuses (none, more
// than 16, one twice, one not of the tag form) and bit 4 in a record that says it needs less
// than 6. The encoder refuses the same options, so that nothing it writes is refused on replay.
import type { Backoff, RetryPolicy } from '../domain/retry-policy.ts';
import { RETRY_CLASS_KINDS, retryClassError, type RetryClass } from '../domain/retry-on.ts';
import type { Job } from '../domain/job.ts';
import { PLACEMENT_FORMAT, RETRY_ON_FORMAT } from '../domain/format.ts';
import { optionsToJson, readRuleOptions, type RateLimit, type RuleOptions } from '../domain/rule-options.ts';
import { I64_MAX, I64_MIN } from '../domain/time.ts';
import { getI64, listSize, putI64, putList } from './codec-bytes.ts';
import { RecordEncodeError } from './codec-errors.ts';
import { BodyError } from './schedule-codec.ts';

const BACKOFFS: readonly Backoff[] = ['fixed', 'exponential'];
/** Flag bits: of a job tail, and of a rule's options. */
const F_RETRY_AT = 1;
const F = { retry: 1, concurrency: 2, rate: 4, retryOn: 8, on: 16 } as const;
const U32_MAX = 0xffffffff;
const RETRY_BYTES = 2 + 1 + 8 + 8 + 8 + 8;
const CLASS_BYTES = 1 + 2;

export interface JobTail {
  readonly attempt: number;
  readonly retryAt?: bigint;
}

/** Bytes of the tail of `job` (its attempt is set); RecordEncodeError when it cannot be stored. */
export function jobTailSize(job: Job): number {
  const a = job.attempt;
  if (a === undefined || !Number.isInteger(a) || a < 1 || a > U32_MAX) {
    throw new RecordEncodeError('execution_out_of_range', `job attempt ${a} is outside 1..${U32_MAX}`);
  }
  if (job.retryAt === undefined) return 4 + 1;
  if (job.retryAt < I64_MIN || job.retryAt > I64_MAX) {
    throw new RecordEncodeError('execution_out_of_range', `job retry_at ${job.retryAt} is outside the signed 64-bit range`);
  }
  return 4 + 1 + 8;
}

/** Writes the tail of `job` at `at` (room made by jobTailSize); returns the offset past it. */
export function writeJobTail(job: Job, buf: Buffer, at: number): number {
  const p = buf.writeUInt32BE(job.attempt!, at);
  buf[p] = job.retryAt === undefined ? 0 : F_RETRY_AT;
  if (job.retryAt === undefined) return p + 1;
  putI64(buf, p + 1, job.retryAt);
  return p + 9;
}

/** Bytes `options` take; RecordEncodeError for options a replay would refuse. */
export function optionsSize(o: RuleOptions): number {
  const refused = refusal(o);
  if (refused !== null) throw new RecordEncodeError('execution_out_of_range', `rule options: ${refused}`);
  const classes = o.retry?.on;
  return 1 + (o.retry !== undefined ? RETRY_BYTES : 0) + (o.concurrency !== undefined ? 4 : 0) + (o.rate !== undefined ? 4 + 8 : 0)
    + (classes !== undefined ? 1 + classes.length * CLASS_BYTES : 0) + (o.on !== undefined ? listSize(o.on, 'rule option on') : 0);
}

/** Writes `options` at `at` (room made by optionsSize); returns the offset past them. */
export function writeOptions(o: RuleOptions, buf: Buffer, at: number): number {
  const { retry: r, concurrency, rate } = o;
  buf[at] = (r !== undefined ? F.retry : 0) | (concurrency !== undefined ? F.concurrency : 0) | (rate !== undefined ? F.rate : 0)
    | (r?.on !== undefined ? F.retryOn : 0) | (o.on !== undefined ? F.on : 0);
  let p = at + 1;
  if (r !== undefined) {
    p = buf.writeUInt16BE(r.attempts, p);
    buf[p] = BACKOFFS.indexOf(r.backoff);
    putI64(buf, p + 1, r.delay);
    p = buf.writeDoubleBE(r.factor, p + 9);
    putI64(buf, p, r.maxDelay);
    p = buf.writeDoubleBE(r.jitter, p + 8);
  }
  if (concurrency !== undefined) p = buf.writeUInt32BE(concurrency, p);
  if (rate !== undefined) {
    putI64(buf, buf.writeUInt32BE(rate.limit, p), rate.per);
    p += 4 + 8;
  }
  if (r?.on !== undefined) {
    buf[p++] = r.on.length;
    for (const c of r.on) {
      buf[p] = RETRY_CLASS_KINDS.indexOf(c.kind);
      p = buf.writeUInt16BE(c.value, p + 1);
    }
  }
  if (o.on !== undefined) p = putList(buf, p, o.on);
  return p;
}

/**
 * Why the record must not hold `o`, or null: what readRuleOptions refuses, read back from the
 * HTTP members it was read from.
 */
function refusal(o: RuleOptions): string | null {
  if (o.retry === undefined && o.concurrency === undefined && o.rate === undefined && o.on === undefined) return 'none is set (a rule without options has none)';
  if (o.retry !== undefined && !BACKOFFS.includes(o.retry.backoff)) return `retry.backoff "${o.retry.backoff}" is not one of ${BACKOFFS.join(' ')}`;
  // A class's value is checked here, not read back: its text leaves out a value its kind has not.
  for (const c of o.retry?.on ?? []) {
    const wrong = retryClassError(c);
    if (wrong !== null) return `retry.on ${wrong}`;
  }
  const json = optionsToJson(o);
  // readRetry takes a factor with exponential backoff only; a fixed policy still carries one
  // (unused), held to the same range so that no NaN or infinity is ever stored.
  const retry = o.retry === undefined ? undefined : { ...(json['retry'] as object), backoff: 'exponential', factor: o.retry.factor };
  const read = readRuleOptions(retry, json['concurrency'], json['rate'], json['on']);
  return 'field' in read ? `${read.field} ${read.error}` : null;
}

// The decoder's cursor: module state, as codec.ts and schedule-codec.ts keep theirs (decoding
// is synchronous and never re-entered).
const EMPTY = Buffer.alloc(0);
let b: Buffer = EMPTY;
let p = 0;
let stop = 0;

function need(n: number, what: string): number {
  if (p + n > stop) throw new BodyError(p, `${what} runs past the end of the record`);
  const at = p;
  p += n;
  return at;
}
const u8 = (what: string): number => b[need(1, what)]!;
const u16 = (what: string): number => b.readUInt16BE(need(2, what));
const u32 = (what: string): number => b.readUInt32BE(need(4, what));
const i64 = (what: string): bigint => getI64(b, need(8, what));
const f64 = (what: string): number => b.readDoubleBE(need(8, what));

function flags(known: number, what: string): number {
  const v = u8(what);
  if ((v & ~known) !== 0) throw new BodyError(p - 1, `unknown ${what} ${v}`);
  return v;
}

/** Reads buf[from, end) with `read`; BodyError unless every byte is used as the layout says. */
function decoding<T>(buf: Buffer, from: number, end: number, read: () => T): T {
  b = buf;
  p = from;
  stop = end;
  try {
    const v = read();
    if (p !== stop) throw new BodyError(p, `${stop - p} trailing bytes after the record`);
    return v;
  } finally {
    b = EMPTY; // do not pin the caller's buffer
  }
}

/** The job tail in buf[from, end); throws BodyError. */
export function decodeJobTail(buf: Buffer, from: number, end: number): JobTail {
  return decoding(buf, from, end, jobTail);
}

/** The rule options in buf[from, end) of a record that needs format `needs`; throws BodyError. */
export function decodeOptions(buf: Buffer, from: number, end: number, needs: number): RuleOptions {
  return decoding(buf, from, end, () => options(needs));
}

function jobTail(): JobTail {
  const attempt = u32('job attempt');
  if (attempt < 1) throw new BodyError(p - 4, 'job attempt 0 (attempts count from 1)');
  return flags(F_RETRY_AT, 'job retry flags') & F_RETRY_AT ? { attempt, retryAt: i64('job retry_at') } : { attempt };
}

function options(needs: number): RuleOptions {
  const at = p;
  const set = flags(F.retry | F.concurrency | F.rate | F.retryOn | F.on, 'rule option flags');
  if (set & F.retryOn && needs < RETRY_ON_FORMAT) throw new BodyError(at, `rule option flags ${set}: retry.on needs format ${RETRY_ON_FORMAT}, the record says ${needs}`);
  if (set & F.retryOn && !(set & F.retry)) throw new BodyError(at, `rule option flags ${set}: retry.on without a retry policy`);
  if (set & F.on && needs < PLACEMENT_FORMAT) throw new BodyError(at, `rule option flags ${set}: on needs format ${PLACEMENT_FORMAT}, the record says ${needs}`);
  const out: { retry?: RetryPolicy; concurrency?: number; rate?: RateLimit; on?: readonly string[] } = {};
  if (set & F.retry) out.retry = retry();
  if (set & F.concurrency) out.concurrency = u32('concurrency');
  if (set & F.rate) out.rate = { limit: u32('rate limit'), per: i64('rate per') };
  if (set & F.retryOn) out.retry = { ...out.retry!, on: retryOn() };
  if (set & F.on) out.on = tags();
  const refused = refusal(out);
  if (refused !== null) throw new BodyError(at, `rule options: ${refused}`);
  return out;
}

function retry(): RetryPolicy {
  const attempts = u16('retry attempts');
  const backoffAt = p;
  const backoff = BACKOFFS[u8('retry backoff')];
  if (backoff === undefined) throw new BodyError(backoffAt, `unknown retry backoff byte ${b[backoffAt]}`);
  return { attempts, backoff, delay: i64('retry delay'), factor: f64('retry factor'), maxDelay: i64('retry max_delay'), jitter: f64('retry jitter') };
}

function retryOn(): readonly RetryClass[] {
  const count = u8('retry on count');
  const out: RetryClass[] = [];
  for (let i = 0; i < count; i++) {
    const kindAt = p;
    const kind = RETRY_CLASS_KINDS[u8('retry on class kind')];
    if (kind === undefined) throw new BodyError(kindAt, `unknown retry on class kind byte ${b[kindAt]}`);
    const c = { kind, value: u16('retry on class value') };
    const wrong = retryClassError(c);
    if (wrong !== null) throw new BodyError(kindAt, `retry.on ${wrong}`);
    out.push(c);
  }
  return out;
}

/** The tags as stored; what they may be is refusal's (readTags), checked with the rest. */
function tags(): readonly string[] {
  const count = u16('on count');
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const at = need(2, 'on tag length');
    out.push(b.toString('utf8', need(b.readUInt16BE(at), 'on tag'), p));
  }
  return out;
}
