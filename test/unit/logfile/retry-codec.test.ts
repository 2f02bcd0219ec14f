// Records of format 4 (doc/logfile-format.md: type 7, a job with retry state; type 8, a rule
// with options; both need 4, a rule whose policy has `retry.on` 5): their bytes, every option
// combination round-tripping exactly, ztick's types 0 and 1 unchanged for what has no retry
// state or options, and a decoder that refuses what the layout or readRuleOptions does not
// allow, naming where.
import { expect } from 'chai';
import { decodePayload, encodeRecord, NewerRecordError, RecordEncodeError } from '../../../lib/logfile/codec.ts';
import { RETRIES_FORMAT, RETRY_ON_FORMAT } from '../../../lib/domain/format.ts';
import { formatRecord } from '../../../lib/logfile/dump-format.ts';
import { recordKey } from '../../../lib/logfile/frames.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import type { Job } from '../../../lib/domain/job.ts';
import type { RetryPolicy } from '../../../lib/domain/retry-policy.ts';
import type { RetryClass } from '../../../lib/domain/retry-on.ts';
import type { RuleOptions } from '../../../lib/domain/rule-options.ts';
import type { RunnerSpec } from '../../../lib/domain/runner-spec.ts';
import { damage, FIXED, frame, patched, ruleRec, S, SHELL } from './option-records.ts';

const EXPONENTIAL: RetryPolicy = { attempts: 5, backoff: 'exponential', delay: 2n * S, factor: 1.5, maxDelay: 600n * S, jitter: 0.25 };
/** 5xx, 404, exit:75: one class of each shape (no value, an HTTP status, an exit status). */
const ON: readonly RetryClass[] = [{ kind: '5xx', value: 0 }, { kind: 'http_status', value: 404 }, { kind: 'exit_status', value: 75 }];
const RUNNERS: RunnerSpec[] = [
  SHELL,
  { type: 'amqp', dsn: 'amqp://h', exchange: '', routing_key: 'k' },
  { type: 'direct', executable: '/bin/echo', args: ['a b', ''] },
  { type: 'awf', workflow: 'wf', inputs: ['k=v'] },
  { type: 'http', method: 'POST', url: 'http://x/' },
  { type: 'redis', url: 'redis://h', command: 'RPUSH', key: 'q' },
];

const ascii = (s: string): number[] => [...Buffer.from(s, 'latin1')];
const jobRec = (job: Partial<Job>): LogRecord => ({ t: 'job', job: { id: 'a', execution: 1n, status: 'triggered', ...job } });

describe('logfile/codec: retry records (format 4)', () => {
  it('a job with retry state: type 7, needs 4, then type 0\'s fields, attempt, flags, retry_at', () => {
    const waiting = jobRec({ attempt: 2, retryAt: 5n });
    expect(encodeRecord(waiting)).to.deep.equal(frame([7, 0, 4, 0, 1, ...ascii('a'), 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 5]));
    const ran = jobRec({ status: 'failed', attempt: 70_000 });
    expect(encodeRecord(ran)).to.deep.equal(frame([7, 0, 4, 0, 1, ...ascii('a'), 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 1, 0x11, 0x70, 0]));
    for (const rec of [waiting, ran, jobRec({ attempt: 1, retryAt: -(2n ** 63n) })]) expect(decodePayload(encodeRecord(rec), 4)).to.deep.equal(rec);
    expect(Object.keys((decodePayload(encodeRecord(ran), 4) as { job: Job }).job)).to.deep.equal(['id', 'execution', 'status', 'attempt']);
  });

  it('a rule with options: type 8, needs 4, then type 1\'s bytes, then the options', () => {
    const type1 = encodeRecord(ruleRec(undefined));
    const rec = ruleRec({ concurrency: 3 });
    expect(encodeRecord(rec)).to.deep.equal(frame([8, 0, 4, ...type1.subarray(5), 2, 0, 0, 0, 3]));
    expect(encodeRecord(ruleRec({ rate: { limit: 10, per: 1_000_000n } })).subarray(5 + 2 + type1.length - 5))
      .to.deep.equal(Buffer.from([4, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0x0f, 0x42, 0x40]));
    const retry = encodeRecord(ruleRec({ retry: FIXED })).subarray(type1.length + 2);
    expect(retry.length).to.equal(1 + 2 + 1 + 8 + 8 + 8 + 8);
    expect([retry[0], retry.readUInt16BE(1), retry[3], retry.readBigInt64BE(4), retry.readDoubleBE(12), retry.readBigInt64BE(20), retry.readDoubleBE(28)])
      .to.deep.equal([1, 3, 0, 30n * S, 2, 3600n * S, 0]);
  });

  it('round-trips every combination of options, and every runner kind with them', () => {
    const rate = { limit: 1_000_000, per: 86_400n * S };
    const combos: RuleOptions[] = [
      { retry: EXPONENTIAL }, { retry: FIXED }, { concurrency: 1 }, { rate },
      { retry: EXPONENTIAL, concurrency: 100_000 }, { retry: FIXED, rate }, { concurrency: 4, rate: { limit: 1, per: 1_000_000n } },
      { retry: EXPONENTIAL, concurrency: 4, rate },
    ];
    for (const options of combos) {
      const rec = ruleRec(options);
      const buf = encodeRecord(rec);
      expect([buf[4], buf[5], buf[6]]).to.deep.equal([8, 0, RETRIES_FORMAT]);
      expect(decodePayload(buf, 4)).to.deep.equal(rec);
    }
    for (const runner of RUNNERS) {
      const rec = ruleRec({ retry: EXPONENTIAL, concurrency: 2, rate }, runner);
      expect(decodePayload(encodeRecord(rec), 4)).to.deep.equal(rec);
      // the runner's bytes are type 1's, byte for byte
      const plain = encodeRecord(ruleRec(undefined, runner));
      expect(encodeRecord(rec).subarray(7, 7 + plain.length - 5)).to.deep.equal(plain.subarray(5));
    }
  });

  it('a job without attempt is still type 0 and a rule without options type 1, byte for byte', () => {
    const ztickJob = frame([0, 0, 4, ...ascii('toto'), 22, 71, 187, 92, 238, 225, 80, 0, 0]);
    expect(encodeRecord({ t: 'job', job: { id: 'toto', execution: 1605457800_000000000n, status: 'planned' } })).to.deep.equal(ztickJob);
    expect(encodeRecord({ t: 'job', job: { id: 'toto', execution: 1605457800_000000000n, status: 'planned', attempt: undefined, retryAt: undefined } })).to.deep.equal(ztickJob);
    const ztickRule = frame([1, 0, 1, ...ascii('t'), 0, 4, ...ascii('toto'), 0, 0, 4, ...ascii('titi')]);
    expect(encodeRecord({ t: 'rule', rule: { id: 't', pattern: 'toto', runner: { type: 'shell', command: 'titi' } } })).to.deep.equal(ztickRule);
    expect(encodeRecord({ t: 'rule', rule: { id: 't', pattern: 'toto', runner: { type: 'shell', command: 'titi' }, options: undefined } })).to.deep.equal(ztickRule);
    expect(decodePayload(ztickRule, 4)).to.not.have.property('options');
  });

  it('a job and its retry state share a fold key: the last record of either type is the job', () => {
    expect(recordKey(jobRec({ attempt: 2 }))).to.equal(recordKey(jobRec({})));
    expect(recordKey(ruleRec({ concurrency: 1 }))).to.equal(recordKey(ruleRec(undefined)));
  });

  describe('the decoder refuses, as damage, naming where', () => {
    const full = ruleRec({ retry: EXPONENTIAL, concurrency: 2, rate: { limit: 5, per: S } });
    const fullBytes = encodeRecord(full);
    /** Frame offset of the options' flags byte. */
    const O = encodeRecord(ruleRec(undefined)).length + 2;
    const waiting = jobRec({ attempt: 2, retryAt: 5n });
    const waitingBytes = encodeRecord(waiting);
    /** Frame offset of the job's attempt. */
    const A = 4 + 3 + 3 + 8 + 1;

    it('a truncated body, and a trailing byte', () => {
      for (const [buf, what] of [[fullBytes, /runs past the end of the record/], [waitingBytes, /job retry_at runs past the end/]] as const) {
        const short = Buffer.from(buf.subarray(0, buf.length - 1));
        short.writeUInt32BE(short.length - 4, 0);
        expect(damage(short).reason).to.match(what);
        const long = Buffer.concat([buf, Buffer.from([0])]);
        long.writeUInt32BE(long.length - 4, 0);
        const e = damage(long);
        expect([e.reason, e.offset]).to.deep.equal(['1 trailing bytes after the record', buf.length]);
      }
      const noFlags = Buffer.from(waitingBytes.subarray(0, A + 4));
      noFlags.writeUInt32BE(noFlags.length - 4, 0);
      expect(damage(noFlags).reason).to.equal('job retry flags runs past the end of the record');
    });

    it('an unknown flag bit', () => {
      // bit 4 is `on` (format 6, rule-on-codec.test.ts); bit 5 is no option
      let e = damage(patched(full, (b) => { b[O] = b[O]! | 32; }));
      expect([e.reason, e.offset]).to.deep.equal(['unknown rule option flags 39', O]);
      e = damage(patched(waiting, (b) => { b[A + 4] = 3; }));
      expect([e.reason, e.offset]).to.deep.equal(['unknown job retry flags 3', A + 4]);
    });

    it('an unknown backoff byte', () => {
      const e = damage(patched(full, (b) => { b[O + 3] = 2; }));
      expect([e.reason, e.offset]).to.deep.equal(['unknown retry backoff byte 2', O + 3]);
    });

    it('attempts 0: a job\'s and a policy\'s', () => {
      const e = damage(patched(waiting, (b) => b.writeUInt32BE(0, A)));
      expect([e.reason, e.offset]).to.deep.equal(['job attempt 0 (attempts count from 1)', A]);
      expect(damage(patched(full, (b) => b.writeUInt16BE(0, O + 1))).reason).to.match(/^rule options: retry\.attempts must be an integer from 1 to 1000/);
      expect(damage(patched(full, (b) => b.writeUInt16BE(1001, O + 1))).reason).to.match(/^rule options: retry\.attempts /);
    });

    it('what readRuleOptions refuses: jitter 2, a NaN or infinite factor, a negative delay, concurrency 0, a rate per under 1ms, no option at all', () => {
      const cases: [(b: Buffer) => void, RegExp][] = [
        [(b) => b.writeDoubleBE(2, O + 28), /^rule options: retry\.jitter must be a number from 0 to 1/],
        [(b) => b.writeDoubleBE(Number.NaN, O + 28), /^rule options: retry\.jitter /],
        [(b) => b.writeDoubleBE(Number.NaN, O + 12), /^rule options: retry\.factor must be a number from 1 to 100/],
        [(b) => b.writeDoubleBE(Number.POSITIVE_INFINITY, O + 12), /^rule options: retry\.factor /],
        [(b) => b.writeDoubleBE(0.5, O + 12), /^rule options: retry\.factor /],
        [(b) => b.writeBigInt64BE(-1n, O + 4), /^rule options: retry\.delay /],
        [(b) => b.writeBigInt64BE(S, O + 20), /^rule options: retry\.max_delay must be from delay/],
        [(b) => b.writeUInt32BE(0, O + 36), /^rule options: concurrency must be an integer from 1/],
        [(b) => b.writeUInt32BE(0, O + 40), /^rule options: rate\.limit /],
        [(b) => b.writeBigInt64BE(999_999n, O + 44), /^rule options: rate\.per must be from 1ms/],
      ];
      for (const [patch, reason] of cases) {
        const e = damage(patched(full, patch));
        expect(e.reason).to.match(reason);
        expect(e.offset).to.equal(O);
      }
      // a fixed backoff's factor (unused) is held to the same range
      expect(damage(patched(ruleRec({ retry: FIXED }), (b) => b.writeDoubleBE(Number.NaN, O + 12))).reason).to.match(/retry\.factor/);
      const none = Buffer.concat([encodeRecord(ruleRec(undefined)).subarray(4), Buffer.from([0])]);
      const noneFrame = frame([8, 0, 4, ...none.subarray(1)]);
      expect(damage(noneFrame).reason).to.match(/^rule options: none is set/);
    });

    it('a record that claims a format this tickd does not read is a newer tickd\'s, whatever follows', () => {
      for (const rec of [full, waiting]) {
        const buf = patched(rec, (b) => { b[6] = 7; });
        expect(() => decodePayload(buf, 4)).to.throw(NewerRecordError, /a record of tickd format 7 at byte offset 0; this tickd reads format 6 and older/);
      }
      // needs 4 is what a format-3 tickd reads as newer than itself, and refuses as such
      expect([waitingBytes[5], waitingBytes[6], fullBytes[5], fullBytes[6]]).to.deep.equal([0, 4, 0, 4]);
    });
  });

  it('the encoder refuses what a replay would refuse, before writing anything', () => {
    const refused: LogRecord[] = [
      jobRec({ attempt: 0 }), jobRec({ attempt: 1.5 }), jobRec({ attempt: 2 ** 32 }), jobRec({ attempt: 1, retryAt: 2n ** 63n }),
      ruleRec({}), ruleRec({ retry: { ...EXPONENTIAL, jitter: Number.NaN } }), ruleRec({ retry: { ...FIXED, attempts: 70_000 } }),
      ruleRec({ concurrency: 0 }), ruleRec({ retry: { ...FIXED, backoff: 'linear' as 'fixed' } }),
    ];
    for (const rec of refused) expect(() => encodeRecord(rec), JSON.stringify(rec, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}` : v))).to.throw(RecordEncodeError);
  });

  it('tickd dump shows them: JSON adds attempt, retry_at and the options; text stays the protocol line', () => {
    expect(formatRecord(jobRec({ attempt: 2, retryAt: 5n }), 'json'))
      .to.equal('{"type":"job","id":"a","execution":1,"status":"triggered","attempt":2,"retry_at":5}');
    expect(formatRecord(jobRec({ status: 'failed', attempt: 3 }), 'json')).to.equal('{"type":"job","id":"a","execution":1,"status":"failed","attempt":3}');
    expect(formatRecord(jobRec({}), 'json')).to.equal('{"type":"job","id":"a","execution":1,"status":"triggered"}');
    expect(formatRecord(jobRec({ attempt: 2, retryAt: 5n }), 'text')).to.equal('triggered SET a 1');
    expect(formatRecord(ruleRec({ retry: FIXED, concurrency: 4, rate: { limit: 10, per: S } }), 'json')).to.equal(
      '{"type":"rule","id":"r","pattern":"p","runner":{"type":"shell","command":"c"},'
      + '"retry":{"attempts":3,"backoff":"fixed","delay":"30s","max_delay":"1h","jitter":0},"concurrency":4,"rate":{"limit":10,"per":"1s"}}',
    );
    expect(formatRecord(ruleRec(undefined), 'json')).to.equal('{"type":"rule","id":"r","pattern":"p","runner":{"type":"shell","command":"c"}}');
  });
});

describe('logfile/codec: a retry policy\'s failure classes (retry.on, format 5)', () => {
  const withOn = (on: readonly RetryClass[], rest: RuleOptions = {}): LogRecord => ruleRec({ ...rest, retry: { ...FIXED, on } });
  const type1 = encodeRecord(ruleRec(undefined));
  /** Frame offset of the options' flags byte, and of the class count after a lone retry policy. */
  const O = type1.length + 2;
  const C = O + 1 + 35;

  it('flag bit 3, then count:u8 and kind:u8 value:u16 per class, in the order given, after the other options; needs 5', () => {
    const buf = encodeRecord(withOn(ON));
    expect([buf[4], buf[5], buf[6]]).to.deep.equal([8, 0, RETRY_ON_FORMAT]);
    expect(buf.subarray(7, O)).to.deep.equal(type1.subarray(5));
    expect(buf[O]).to.equal(1 | 8);
    expect([...buf.subarray(C)]).to.deep.equal([3, 4, 0, 0, 5, 0x01, 0x94, 1, 0, 75]);
    // after concurrency and rate
    const all = encodeRecord(withOn([{ kind: 'runner', value: 0 }], { concurrency: 2, rate: { limit: 5, per: S } }));
    expect(all[O]).to.equal(15);
    expect([...all.subarray(all.length - 4)]).to.deep.equal([1, 8, 0, 0]);
  });

  it('round-trips every kind of class, alone and with every other option; a rule without on still needs 4 only', () => {
    const every: RetryClass[] = [
      { kind: 'exit', value: 0 }, { kind: 'exit_status', value: 1 }, { kind: 'exit_status', value: 255 }, { kind: 'signal', value: 0 },
      { kind: '4xx', value: 0 }, { kind: '5xx', value: 0 }, { kind: 'http_status', value: 400 }, { kind: 'http_status', value: 599 },
      { kind: 'network', value: 0 }, { kind: 'broker', value: 0 }, { kind: 'runner', value: 0 },
    ];
    const thirtyTwo = Array.from({ length: 32 }, (_, i): RetryClass => ({ kind: 'http_status', value: 500 + i }));
    for (const rec of [withOn(ON), withOn(every), withOn([...every].reverse()), withOn(thirtyTwo), withOn(ON, { concurrency: 1, rate: { limit: 1, per: S } })]) {
      const buf = encodeRecord(rec);
      expect(buf[6]).to.equal(RETRY_ON_FORMAT);
      expect(decodePayload(buf, 4)).to.deep.equal(rec);
    }
    const without = encodeRecord(ruleRec({ retry: FIXED, concurrency: 1 }));
    expect([without[5], without[6]]).to.deep.equal([0, RETRIES_FORMAT]);
    expect(Object.keys((decodePayload(without, 4) as { rule: { options: { retry: object } } }).rule.options.retry)).to.not.include('on');
  });

  describe('the decoder refuses, as damage, naming where', () => {
    const rec = withOn(ON);
    const cases: [string, (b: Buffer) => void, string, number][] = [
      ['an unknown kind byte', (b) => { b[C + 1] = 9; }, 'unknown retry on class kind byte 9', C + 1],
      ['a value given to a kind without one', (b) => b.writeUInt16BE(1, C + 2), 'retry.on 5xx takes no value (1)', C + 1],
      ['exit status 0', (b) => b.writeUInt16BE(0, C + 8), 'retry.on exit:0: an exit status is from 1 to 255', C + 7],
      ['exit status 256', (b) => b.writeUInt16BE(256, C + 8), 'retry.on exit:256: an exit status is from 1 to 255', C + 7],
      ['HTTP status 302', (b) => b.writeUInt16BE(302, C + 5), 'retry.on 302: an HTTP status here is from 400 to 599', C + 4],
      // 5xx (kind byte 4, value 0) where 404 was: 5xx, 5xx, exit:75
      ['a class given twice', (b) => { b[C + 4] = 4; b.writeUInt16BE(0, C + 5); }, 'rule options: retry.on 5xx is given twice', O],
      ['bit 3 in a record that says it needs format 4', (b) => { b[6] = 4; }, 'rule option flags 9: retry.on needs format 5, the record says 4', O],
      ['bit 3 without a retry policy', (b) => { b[O] = 8 | 2; }, 'rule option flags 10: retry.on without a retry policy', O],
    ];
    for (const [what, patch, reason, offset] of cases) {
      it(what, () => {
        const e = damage(patched(rec, patch));
        expect([e.reason, e.offset]).to.deep.equal([reason, offset]);
      });
    }

    it('a count of 0 with the flag set, and a count past the bytes there are', () => {
      const noClass = Buffer.from(encodeRecord(rec).subarray(0, C + 1));
      noClass[C] = 0;
      noClass.writeUInt32BE(noClass.length - 4, 0);
      const e = damage(noClass);
      expect([e.reason, e.offset]).to.deep.equal(['rule options: retry.on must name at least one failure class', O]);
      expect(damage(patched(rec, (b) => { b[C] = 4; })).reason).to.equal('retry on class kind runs past the end of the record');
    });

    it('more than 32 classes', () => {
      const many = Buffer.concat([encodeRecord(rec).subarray(0, C), Buffer.from([33]),
        ...Array.from({ length: 33 }, (_, i) => Buffer.from([5, (500 + i) >> 8, (500 + i) & 0xff]))]);
      many.writeUInt32BE(many.length - 4, 0);
      expect(damage(many).reason).to.equal('rule options: retry.on names at most 32 failure classes');
    });
  });

  it('the encoder refuses what the decoder would, before writing anything', () => {
    const bad: readonly (readonly RetryClass[])[] = [
      [], [{ kind: '5xx', value: 0 }, { kind: '5xx', value: 0 }], [{ kind: 'exit_status', value: 0 }], [{ kind: 'http_status', value: 600 }],
      [{ kind: 'signal', value: 3 }], [{ kind: 'teapot' as 'signal', value: 0 }],
      Array.from({ length: 33 }, (_, i): RetryClass => ({ kind: 'http_status', value: 400 + i })),
    ];
    for (const on of bad) expect(() => encodeRecord(withOn(on)), JSON.stringify(on)).to.throw(RecordEncodeError, /retry\.on/);
  });

  it('tickd dump shows them: retry.on in the text line, "on" in the JSON retry object', () => {
    expect(formatRecord(withOn(ON), 'text')).to.equal(
      'rule RULE SET r p retry.attempts=3 retry.backoff=fixed retry.delay=30s retry.max_delay=1h retry.on=5xx,404,exit:75 shell c');
    expect(formatRecord(withOn(ON), 'json')).to.equal('{"type":"rule","id":"r","pattern":"p","runner":{"type":"shell","command":"c"},'
      + '"retry":{"attempts":3,"backoff":"fixed","delay":"30s","max_delay":"1h","jitter":0,"on":["5xx","404","exit:75"]}}');
  });
});
