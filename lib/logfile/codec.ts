// Record codec of the logfile (doc/logfile-format.md). ztick writes the same bytes, so its
// logfiles load unchanged.
//
// Theory. A logfile is a sequence of frames:
//
//   frame   = u32 payload_length (big-endian) ‖ payload
//   payload = 0x00 id:str  execution:i64  status:u8        job (status 0 planned 1 triggered
//                                                              2 executed 3 failed)
//           | 0x01 id:str  pattern:str  runner             rule
//           | 0x02 id:str                                  job removal
//           | 0x03 id:str                                  rule removal
//           | type:u8 (>= 0x04) needs:u16 body             extension record (format 2 on)
//   extension records: 0x04 (no body)                      format mark: the writer of what
//                                                              follows works at format `needs`
//                      0x05 schedule body (needs 3)         a schedule's state (schedule-codec.ts)
//                      0x06 id:str (needs 3)                schedule removal
//                      0x07 id:str execution:i64 status:u8 attempt:u32 flags:u8 [retry_at:i64]
//                           (needs 4)                      a job with retry state; 0x00 when
//                                                              it has none (retry-codec.ts)
//                      0x08 id:str pattern:str runner options (needs 4; 5 with retry.on;
//                           6 with on)
//                                                          a rule with options; 0x01 when it
//                                                              has none (retry-codec.ts)
//   runner  = 0x00 command:str                             shell
//           | 0x01 dsn:str exchange:str routing_key:str    amqp
//           | 0x02 executable:str count:u16 arg:str*       direct
//           | 0x03 workflow:str count:u16 input:str*       awf   (inputs are `key=value`)
//           | 0x04 method:str url:str                      http
//           | 0x05 url:str command:str key:str             redis
//   str     = u16 byte_length (big-endian) ‖ UTF-8 bytes
//
// Invariants: the encoder computes the exact size first and writes into one allocation; it
// throws RecordEncodeError before writing anything if a string, a list or the whole payload
// is too large, or a value is one the decoder would refuse. The decoder is strict (as
// ztick's is): every byte of a payload is accounted for, strings are valid UTF-8,
// enumerations are known values; any violation throws RecordDecodeError naming the absolute
// byte offset in the file. Iterating the frames of a
// buffer (and telling a torn tail from corruption) is frames.ts.
//
// Extension records (lib/domain/format.ts): type bytes 0..3 are ztick's (format 1) and never
// change; every type byte from 0x04 on is followed by `needs`, the lowest format that reads
// the record, and `needs` is read before anything else of it: above FORMAT_VERSION the body
// is unknown by definition, and the record is refused as a newer tickd's (NewerRecordError),
// not as damage. An extension type this code does not know although its `needs` says it
// should is damage (RecordDecodeError), like any unknown byte.
import { isUtf8 } from 'node:buffer';
import { FIRST_EXTENSION_FORMAT, FORMAT_VERSION, readsFormat, RETRIES_FORMAT, SCHEDULES_FORMAT } from '../domain/format.ts';
import { JOB_STATUSES, statusCode } from '../domain/job.ts';
import type { Job, JobStatus } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import { optionsFormat } from '../domain/rule-options.ts';
import { HTTP_METHODS, REDIS_COMMANDS } from '../domain/runner-spec.ts';
import { I64_MAX, I64_MIN } from '../domain/time.ts';
import type { HttpMethod, RedisCommand, RunnerSpec } from '../domain/runner-spec.ts';
import type { LogRecord } from '../engine/journal.ts';
import { NewerRecordError, RecordDecodeError, RecordEncodeError } from './codec-errors.ts';
import { BodyError, decodeScheduleBody, scheduleBodySize, writeScheduleBody } from './schedule-codec.ts';
import { decodeJobTail, decodeOptions, jobTailSize, optionsSize, writeJobTail, writeOptions } from './retry-codec.ts';
import { getI64, listSize, putI64, putList, putStr, strSize } from './codec-bytes.ts';

export { NewerRecordError, RecordDecodeError, RecordEncodeError } from './codec-errors.ts';
export type { RecordEncodeCode } from './codec-errors.ts';

export const FRAME_HEADER_BYTES = 4;
/**
 * No record tickd accepts comes near this (TCP lines are 4 KiB, HTTP bodies 1 MiB). A larger
 * declared length is treated as corruption rather than as a torn tail, so that one damaged
 * length header cannot make startup cut off everything after it.
 */
export const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;

const TYPE_JOB = 0;
const TYPE_RULE = 1;
const TYPE_JOB_REMOVED = 2;
const TYPE_RULE_REMOVED = 3;
/** The format mark, the first extension record: from type byte 4 on, `needs` follows it. */
const TYPE_FORMAT = 4;
const TYPE_SCHEDULE = 5;
const TYPE_SCHEDULE_REMOVED = 6;
const TYPE_JOB_RETRY = 7;
const TYPE_RULE_OPTIONS = 8;

/** Persisted runner discriminants; 0..4 are fixed forever, later kinds take the next byte. */
const RUNNER_BYTE = { shell: 0, amqp: 1, direct: 2, awf: 3, http: 4, redis: 5 } as const;

// ---------------------------------------------------------------- encoding

function runnerSize(r: RunnerSpec): number {
  switch (r.type) {
    case 'shell': return 1 + strSize(r.command, 'shell command');
    case 'amqp': return 1 + strSize(r.dsn, 'amqp dsn') + strSize(r.exchange, 'amqp exchange') + strSize(r.routing_key, 'amqp routing_key');
    case 'direct': return 1 + strSize(r.executable, 'direct executable') + listSize(r.args, 'direct args');
    case 'awf': return 1 + strSize(r.workflow, 'awf workflow') + listSize(r.inputs, 'awf inputs');
    case 'http': return 1 + strSize(r.method, 'http method') + strSize(r.url, 'http url');
    case 'redis': return 1 + strSize(r.url, 'redis url') + strSize(r.command, 'redis command') + strSize(r.key, 'redis key');
  }
}

function payloadSize(rec: LogRecord): number {
  switch (rec.t) {
    case 'job':
      if (rec.job.execution < I64_MIN || rec.job.execution > I64_MAX) {
        throw new RecordEncodeError('execution_out_of_range', `job execution ${rec.job.execution} is outside the signed 64-bit range`);
      }
      return 1 + strSize(rec.job.id, 'job identifier') + 8 + 1 + (rec.job.attempt === undefined ? 0 : 2 + jobTailSize(rec.job));
    case 'rule':
      return 1 + strSize(rec.rule.id, 'rule identifier') + strSize(rec.rule.pattern, 'rule pattern') + runnerSize(rec.rule.runner) +
        (rec.rule.options === undefined ? 0 : 2 + optionsSize(rec.rule.options));
    case 'job.removed': return 1 + strSize(rec.id, 'job identifier');
    case 'rule.removed': return 1 + strSize(rec.id, 'rule identifier');
    case 'format':
      // A mark no reader of this code could read back (above FORMAT_VERSION), or that claims a
      // format without extension records, would be a lie about what follows it.
      if (!Number.isInteger(rec.version) || rec.version < FIRST_EXTENSION_FORMAT || !readsFormat(rec.version)) {
        throw new RecordEncodeError('format_out_of_range', `format mark ${rec.version} is outside ${FIRST_EXTENSION_FORMAT}..${FORMAT_VERSION}`);
      }
      return 1 + 2;
    case 'schedule': return 1 + 2 + scheduleBodySize(rec.state);
    case 'schedule.removed': return 1 + 2 + strSize(rec.id, 'schedule identifier');
  }
}

function putNeeds(buf: Buffer, at: number, type: number, needs: number): number {
  buf[at] = type;
  buf[at + 1] = needs >>> 8;
  buf[at + 2] = needs & 0xff;
  return at + 3;
}

/** Bytes the record's whole frame takes; throws RecordEncodeError if it cannot be stored. */
export function frameSize(rec: LogRecord): number {
  const size = payloadSize(rec);
  if (size > MAX_PAYLOAD_BYTES) throw new RecordEncodeError('record_too_large', `record is ${size} bytes; the logfile holds at most ${MAX_PAYLOAD_BYTES}`);
  return FRAME_HEADER_BYTES + size;
}

function putRunner(buf: Buffer, at: number, r: RunnerSpec): number {
  buf[at] = RUNNER_BYTE[r.type];
  const p = at + 1;
  switch (r.type) {
    case 'shell': return putStr(buf, p, r.command);
    case 'amqp': return putStr(buf, putStr(buf, putStr(buf, p, r.dsn), r.exchange), r.routing_key);
    case 'direct': return putList(buf, putStr(buf, p, r.executable), r.args);
    case 'awf': return putList(buf, putStr(buf, p, r.workflow), r.inputs);
    case 'http': return putStr(buf, putStr(buf, p, r.method), r.url);
    case 'redis': return putStr(buf, putStr(buf, putStr(buf, p, r.url), r.command), r.key);
  }
}

/**
 * Writes the frame of `rec` at `at`; `size` must be frameSize(rec) and the buffer must have
 * room for it. Returns the offset just past the frame.
 */
export function writeFrame(rec: LogRecord, size: number, buf: Buffer, at: number): number {
  buf.writeUInt32BE(size - FRAME_HEADER_BYTES, at);
  let p = at + FRAME_HEADER_BYTES;
  switch (rec.t) {
    case 'job':
      if (rec.job.attempt === undefined) buf[p++] = TYPE_JOB;
      else p = putNeeds(buf, p, TYPE_JOB_RETRY, RETRIES_FORMAT);
      p = putStr(buf, p, rec.job.id);
      putI64(buf, p, rec.job.execution);
      buf[p + 8] = statusCode(rec.job.status);
      p += 9;
      if (rec.job.attempt !== undefined) p = writeJobTail(rec.job, buf, p);
      break;
    case 'rule':
      if (rec.rule.options === undefined) buf[p++] = TYPE_RULE;
      else p = putNeeds(buf, p, TYPE_RULE_OPTIONS, optionsFormat(rec.rule.options));
      p = putRunner(buf, putStr(buf, putStr(buf, p, rec.rule.id), rec.rule.pattern), rec.rule.runner);
      if (rec.rule.options !== undefined) p = writeOptions(rec.rule.options, buf, p);
      break;
    case 'job.removed':
      buf[p] = TYPE_JOB_REMOVED;
      p = putStr(buf, p + 1, rec.id);
      break;
    case 'rule.removed':
      buf[p] = TYPE_RULE_REMOVED;
      p = putStr(buf, p + 1, rec.id);
      break;
    case 'format':
      p = putNeeds(buf, p, TYPE_FORMAT, rec.version);
      break;
    case 'schedule':
      p = writeScheduleBody(rec.state, buf, putNeeds(buf, p, TYPE_SCHEDULE, SCHEDULES_FORMAT));
      break;
    case 'schedule.removed':
      p = putStr(buf, putNeeds(buf, p, TYPE_SCHEDULE_REMOVED, SCHEDULES_FORMAT), rec.id);
      break;
  }
  return p;
}

/** One whole frame (length header + payload) in one allocation. */
export function encodeRecord(rec: LogRecord): Buffer {
  const size = frameSize(rec);
  const buf = Buffer.allocUnsafe(size);
  writeFrame(rec, size, buf, 0);
  return buf;
}

// ---------------------------------------------------------------- decoding

// One reusable cursor: decoding is synchronous and never re-entered, and not allocating a
// reader per record matters when a million records replay.
const EMPTY = Buffer.alloc(0);
let src: Buffer = EMPTY;
let pos = 0;
let end = 0;
let base = 0; // file offset of src[0]
let frameAt = 0; // file offset of the frame being decoded

function fail(at: number, reason: string): RecordDecodeError {
  return new RecordDecodeError(frameAt, base + at, reason);
}

function u8(what: string): number {
  if (pos >= end) throw fail(pos, `${what} is missing (the record ends early)`);
  return src[pos++]!;
}

function u16(what: string): number {
  if (pos + 2 > end) throw fail(pos, `${what} runs past the end of the record`);
  const v = (src[pos]! << 8) | src[pos + 1]!;
  pos += 2;
  return v;
}

function str(what: string): string {
  const lenAt = pos;
  const len = u16(`length of ${what}`);
  const stop = pos + len;
  if (stop > end) throw fail(lenAt, `${what} (${len} bytes) runs past the end of the record`);
  let ascii = true;
  for (let i = pos; i < stop; i++) {
    if (src[i]! > 0x7f) { ascii = false; break; }
  }
  if (!ascii && !isUtf8(src.subarray(pos, stop))) throw fail(pos, `${what} is not valid UTF-8`);
  const s = src.toString(ascii ? 'latin1' : 'utf8', pos, stop);
  pos = stop;
  return s;
}

function list(what: string): string[] {
  const count = u16(`count of ${what}`);
  const items = new Array<string>(count);
  for (let i = 0; i < count; i++) items[i] = str(`${what}[${i}]`);
  return items;
}

function oneOf<T extends string>(allowed: readonly T[], what: string): T {
  const at = pos;
  const s = str(what);
  if (!(allowed as readonly string[]).includes(s)) throw fail(at, `${what} "${s}" is not one of ${allowed.join(' ')}`);
  return s as T;
}

function runner(): RunnerSpec {
  const at = pos;
  const kind = u8('runner discriminant');
  switch (kind) {
    case RUNNER_BYTE.shell: return { type: 'shell', command: str('shell command') };
    case RUNNER_BYTE.amqp: return { type: 'amqp', dsn: str('amqp dsn'), exchange: str('amqp exchange'), routing_key: str('amqp routing_key') };
    case RUNNER_BYTE.direct: return { type: 'direct', executable: str('direct executable'), args: list('direct args') };
    case RUNNER_BYTE.awf: return { type: 'awf', workflow: str('awf workflow'), inputs: list('awf inputs') };
    case RUNNER_BYTE.http: return { type: 'http', method: oneOf<HttpMethod>(HTTP_METHODS, 'http method'), url: str('http url') };
    case RUNNER_BYTE.redis: return { type: 'redis', url: str('redis url'), command: oneOf<RedisCommand>(REDIS_COMMANDS, 'redis command'), key: str('redis key') };
    default: throw fail(at, `unknown runner discriminant ${kind}`);
  }
}

/** What a job record holds from its identifier to its status (types 0 and 7). */
function jobFields(): Job {
  const id = str('job identifier');
  if (pos + 8 > end) throw fail(pos, 'job execution runs past the end of the record');
  const execution = getI64(src, pos);
  pos += 8;
  const statusAt = pos;
  const code = u8('job status');
  const status: JobStatus | undefined = JOB_STATUSES[code];
  if (status === undefined) throw fail(statusAt, `unknown job status byte ${code}`);
  return { id, execution, status };
}

/** What a rule record holds from its identifier to its runner (types 1 and 8). */
function ruleFields(): Rule {
  const id = str('rule identifier');
  const pattern = str('rule pattern');
  return { id, pattern, runner: runner() };
}

/** The rest of the record, which a layout of its own decodes (BodyError: where, and why). */
function tail<T>(decode: (buf: Buffer, from: number, to: number) => T): T {
  try {
    const value = decode(src, pos, end);
    pos = end;
    return value;
  } catch (err) {
    if (err instanceof BodyError) throw fail(err.at, err.message);
    throw err;
  }
}

function payload(): LogRecord {
  const at = pos;
  const type = u8('record type byte');
  switch (type) {
    case TYPE_JOB: return { t: 'job', job: jobFields() };
    case TYPE_RULE: return { t: 'rule', rule: ruleFields() };
    case TYPE_JOB_REMOVED: return { t: 'job.removed', id: str('job identifier') };
    case TYPE_RULE_REMOVED: return { t: 'rule.removed', id: str('rule identifier') };
    default: return extension(at, type); // every type byte from TYPE_FORMAT on
  }
}

/** An extension record whose type byte (at `at`) has been read: `needs` first, then the body. */
function extension(at: number, type: number): LogRecord {
  const needsAt = pos;
  const needs = u16(`format needed by record type ${type}`);
  if (!readsFormat(needs)) throw new NewerRecordError(frameAt, base + needsAt, needs);
  switch (type) {
    case TYPE_FORMAT:
      if (needs < FIRST_EXTENSION_FORMAT) throw fail(needsAt, `format mark ${needs}: no format before ${FIRST_EXTENSION_FORMAT} has extension records`);
      return { t: 'format', version: needs };
    case TYPE_SCHEDULE: return { t: 'schedule', state: tail(decodeScheduleBody) };
    case TYPE_SCHEDULE_REMOVED: return { t: 'schedule.removed', id: str('schedule identifier') };
    case TYPE_JOB_RETRY: return { t: 'job', job: { ...jobFields(), ...tail(decodeJobTail) } };
    case TYPE_RULE_OPTIONS: return { t: 'rule', rule: { ...ruleFields(), options: tail((b, from, to) => decodeOptions(b, from, to, needs)) } };
    default: throw fail(at, `unknown record type byte ${type}`);
  }
}

/**
 * Decodes the payload in buf[offset, payloadEnd). `baseOffset` is the file offset of buf[0],
 * so errors name absolute file offsets; the frame header is taken to sit just before
 * `offset`. Throws RecordDecodeError on any malformation, trailing bytes included, and its
 * subclass NewerRecordError for a record of a format above FORMAT_VERSION.
 */
export function decodePayload(buf: Buffer, offset: number, payloadEnd: number = buf.length, baseOffset = 0): LogRecord {
  src = buf;
  pos = offset;
  end = payloadEnd;
  base = baseOffset;
  frameAt = baseOffset + offset - FRAME_HEADER_BYTES;
  try {
    const rec = payload();
    if (pos !== end) throw fail(pos, `${end - pos} trailing bytes after the record`);
    return rec;
  } finally {
    src = EMPTY; // do not pin the caller's buffer
  }
}
