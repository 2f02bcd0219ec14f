// What the tests of type 8 records (a rule with options: retry-codec.test.ts, rule-on-codec.test.ts)
// build and take apart: frames, rule records, patched bytes, and the damage a decode meets.
import { expect } from 'chai';
import { decodePayload, encodeRecord, NewerRecordError, RecordDecodeError } from '../../../lib/logfile/codec.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import type { RetryPolicy } from '../../../lib/domain/retry-policy.ts';
import type { RuleOptions } from '../../../lib/domain/rule-options.ts';
import type { RunnerSpec } from '../../../lib/domain/runner-spec.ts';

export const S = 1_000_000_000n;
export const FIXED: RetryPolicy = { attempts: 3, backoff: 'fixed', delay: 30n * S, factor: 2, maxDelay: 3600n * S, jitter: 0 };
export const SHELL: RunnerSpec = { type: 'shell', command: 'c' };

export function frame(payload: number[]): Buffer {
  const out = Buffer.alloc(4 + payload.length);
  out.writeUInt32BE(payload.length, 0);
  Buffer.from(payload).copy(out, 4);
  return out;
}

export const ruleRec = (options: RuleOptions | undefined, runner: RunnerSpec = SHELL): LogRecord =>
  ({ t: 'rule', rule: { id: 'r', pattern: 'p', runner, ...(options === undefined ? {} : { options }) } });

export function damage(buf: Buffer): RecordDecodeError {
  try {
    decodePayload(buf, 4);
  } catch (err) {
    expect(err).to.be.instanceOf(RecordDecodeError);
    expect(err).to.not.be.instanceOf(NewerRecordError);
    return err as RecordDecodeError;
  }
  throw new Error('decoded');
}

/** The frame of `rec` with `patch` applied to its bytes (offsets within the frame). */
export function patched(rec: LogRecord, patch: (b: Buffer) => void): Buffer {
  const b = encodeRecord(rec);
  patch(b);
  return b;
}
