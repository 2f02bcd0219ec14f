// Byte-exact checks of the logfile codec against frames written out by hand (the ztick layout,
// doc/logfile-format.md), plus every way a frame can be malformed, and extension records: the
// format mark, a newer tickd's record (refused as such), an unknown one (damage).
import { expect } from 'chai';
import { decodePayload, encodeRecord, MAX_PAYLOAD_BYTES, NewerRecordError, RecordDecodeError, RecordEncodeError } from '../../../lib/logfile/codec.ts';
import { FORMAT_VERSION } from '../../../lib/domain/format.ts';
import { foldRecord, forEachFrame, isRemoval, recordKey } from '../../../lib/logfile/frames.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';

/** Bytes from numbers and ASCII text (text is spelled out only to keep the vectors readable). */
function bytes(...parts: (number | string)[]): Buffer {
  const out: number[] = [];
  for (const p of parts) {
    if (typeof p === 'number') out.push(p);
    else for (const ch of p) { const c = ch.charCodeAt(0); if (c > 0x7f) throw new Error('ASCII only'); out.push(c); }
  }
  return Buffer.from(out);
}

function frame(payload: Buffer): Buffer {
  const len = payload.length;
  return Buffer.concat([bytes(len >>> 24, (len >>> 16) & 0xff, (len >>> 8) & 0xff, len & 0xff), payload]);
}

// 2020-11-15T16:30:00Z in ns = 0x1647BB5CEEE15000 (ztick's own test vector)
const TS = 1605457800_000000000n;

const VECTORS: [string, LogRecord, Buffer][] = [
  ['job planned (ztick vector)', { t: 'job', job: { id: 'toto', execution: TS, status: 'planned' } },
    bytes(0, 0, 4, 'toto', 22, 71, 187, 92, 238, 225, 80, 0, 0)],
  ['job executed (ztick vector)', { t: 'job', job: { id: 'tatat', execution: TS, status: 'executed' } },
    bytes(0, 0, 5, 'tatat', 22, 71, 187, 92, 238, 225, 80, 0, 2)],
  ['job triggered', { t: 'job', job: { id: 'a', execution: 1n, status: 'triggered' } },
    bytes(0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 1, 1)],
  ['job failed with a negative execution', { t: 'job', job: { id: 'a', execution: -1n, status: 'failed' } },
    bytes(0, 0, 1, 'a', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3)],
  ['job at the i64 minimum', { t: 'job', job: { id: 'm', execution: -(2n ** 63n), status: 'planned' } },
    bytes(0, 0, 1, 'm', 0x80, 0, 0, 0, 0, 0, 0, 0, 0)],
  ['job at the i64 maximum', { t: 'job', job: { id: 'M', execution: 2n ** 63n - 1n, status: 'planned' } },
    bytes(0, 0, 1, 'M', 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0)],
  ['job with a unicode identifier (length counts UTF-8 bytes)', { t: 'job', job: { id: 'é☃', execution: 0n, status: 'planned' } },
    bytes(0, 0, 5, 0xc3, 0xa9, 0xe2, 0x98, 0x83, 0, 0, 0, 0, 0, 0, 0, 0, 0)],
  ['rule shell (ztick vector)', { t: 'rule', rule: { id: 't', pattern: 'toto', runner: { type: 'shell', command: 'titi' } } },
    bytes(1, 0, 1, 't', 0, 4, 'toto', 0, 0, 4, 'titi')],
  ['rule shell with an emoji', { t: 'rule', rule: { id: 's', pattern: '', runner: { type: 'shell', command: '😀' } } },
    bytes(1, 0, 1, 's', 0, 0, 0, 0, 4, 0xf0, 0x9f, 0x98, 0x80)],
  ['rule amqp (ztick vector, empty exchange)', { t: 'rule', rule: { id: 'ta', pattern: 'tot', runner: { type: 'amqp', dsn: 'titit', exchange: '', routing_key: 'a' } } },
    bytes(1, 0, 2, 'ta', 0, 3, 'tot', 1, 0, 5, 'titit', 0, 0, 0, 1, 'a')],
  ['rule direct', { t: 'rule', rule: { id: 'd', pattern: '', runner: { type: 'direct', executable: '/bin/echo', args: ['a b', ''] } } },
    bytes(1, 0, 1, 'd', 0, 0, 2, 0, 9, '/bin/echo', 0, 2, 0, 3, 'a b', 0, 0)],
  ['rule direct without args', { t: 'rule', rule: { id: 'd', pattern: 'd', runner: { type: 'direct', executable: 'x', args: [] } } },
    bytes(1, 0, 1, 'd', 0, 1, 'd', 2, 0, 1, 'x', 0, 0)],
  ['rule awf', { t: 'rule', rule: { id: 'w', pattern: 'w.', runner: { type: 'awf', workflow: 'wf', inputs: ['k=v'] } } },
    bytes(1, 0, 1, 'w', 0, 2, 'w.', 3, 0, 2, 'wf', 0, 1, 0, 3, 'k=v')],
  ['rule http', { t: 'rule', rule: { id: 'h', pattern: 'h', runner: { type: 'http', method: 'POST', url: 'http://x/' } } },
    bytes(1, 0, 1, 'h', 0, 1, 'h', 4, 0, 4, 'POST', 0, 9, 'http://x/')],
  ['rule redis', { t: 'rule', rule: { id: 'r', pattern: 'r', runner: { type: 'redis', url: 'redis://h', command: 'SET', key: 'k' } } },
    bytes(1, 0, 1, 'r', 0, 1, 'r', 5, 0, 9, 'redis://h', 0, 3, 'SET', 0, 1, 'k')],
  ['job removal', { t: 'job.removed', id: 'ab' }, bytes(2, 0, 2, 'ab')],
  ['rule removal', { t: 'rule.removed', id: 'ab' }, bytes(3, 0, 2, 'ab')],
];

function decodeError(buf: Buffer, base = 0): RecordDecodeError {
  try {
    decodePayload(buf, 4, buf.length, base);
  } catch (err) {
    expect(err).to.be.instanceOf(RecordDecodeError);
    return err as RecordDecodeError;
  }
  throw new Error('decoded without an error');
}

describe('logfile/codec', () => {
  describe('encode and decode, byte for byte', () => {
    for (const [name, rec, payload] of VECTORS) {
      it(name, () => {
        const expected = frame(payload);
        expect(encodeRecord(rec).toString('hex')).to.equal(expected.toString('hex'));
        expect(decodePayload(expected, 4)).to.deep.equal(rec);
      });
    }
  });

  describe('frames', () => {
    const all = Buffer.concat(VECTORS.map(([, , p]) => frame(p)));

    it('forEachFrame gives every record with its frame bounds', () => {
      const items: { record: LogRecord; start: number; end: number }[] = [];
      expect(forEachFrame(all, 1000, (record, start, end) => items.push({ record, start, end }))).to.equal(all.length);
      expect(items.map((i) => i.record)).to.deep.equal(VECTORS.map(([, r]) => r));
      expect(items[1]!.start).to.equal(frame(VECTORS[0]![2]).length);
    });

    it('forEachFrame stops before an incomplete frame and says where', () => {
      const one = frame(VECTORS[0]![2]);
      const buf = Buffer.concat([one, one.subarray(0, 7)]);
      const seen: LogRecord[] = [];
      expect(forEachFrame(buf, 0, (r) => seen.push(r))).to.equal(one.length);
      expect(seen).to.have.length(1);
    });

    it('tells a torn tail (partial header, partial payload) apart from records', () => {
      const one = frame(VECTORS[0]![2]);
      for (const cut of [1, 3, 4, one.length - 1]) {
        const seen: LogRecord[] = [];
        expect(forEachFrame(Buffer.concat([one, one.subarray(0, cut)]), 10, (r) => seen.push(r))).to.equal(one.length);
        expect(seen).to.have.length(1);
      }
    });

    it('treats a frame length beyond the limit as corruption, not as a torn tail', () => {
      const buf = Buffer.concat([frame(VECTORS[0]![2]), bytes(0x7f, 0xff, 0xff, 0xff, 0)]);
      expect(() => forEachFrame(buf, 0, () => {})).to.throw(RecordDecodeError, /byte offset 20 .*exceeds/);
      expect(MAX_PAYLOAD_BYTES).to.be.below(0x7fffffff);
    });
  });

  it('keys a job and a rule with the same identifier apart; removals share their entry\'s key', () => {
    const keys = VECTORS.map(([, r]) => recordKey(r));
    expect(keys[0]).to.not.equal(recordKey({ t: 'rule.removed', id: 'toto' }));
    expect(recordKey({ t: 'job.removed', id: 'toto' })).to.equal(keys[0]);
    expect(recordKey({ t: 'rule.removed', id: 't' })).to.equal(keys[7]);
    expect(VECTORS.map(([, r]) => isRemoval(r)).filter(Boolean)).to.have.length(2);
  });

  it('foldRecord keeps the last state per entry in last-write order and drops removed entries', () => {
    const job = (id: string, execution: bigint): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });
    const state = new Map<string, LogRecord>();
    for (const rec of [job('a', 1n), job('b', 2n), job('a', 3n), { t: 'job.removed', id: 'b' } as const, job('c', 4n)]) {
      foldRecord(state, rec, () => rec);
    }
    expect([...state.values()]).to.deep.equal([job('a', 3n), job('c', 4n)]);
  });

  it('refuses to encode a job status it has no byte for', () => {
    const bad = { t: 'job', job: { id: 'x', execution: 1n, status: 'lost' } } as unknown as LogRecord;
    expect(() => encodeRecord(bad)).to.throw(RangeError, /lost/);
  });

  describe('malformed payloads are rejected with the file offset', () => {
    it('an empty payload', () => {
      const e = decodeError(frame(bytes()), 50);
      expect(e.frameOffset).to.equal(50);
      expect(e.message).to.match(/record type byte is missing/);
    });
    it('an unknown record type byte', () => {
      const e = decodeError(frame(bytes(9, 0, 1, 'a')), 100);
      expect([e.frameOffset, e.offset]).to.deep.equal([100, 104]);
      expect(e.message).to.equal('record at byte offset 100 does not decode: unknown record type byte 9 (byte offset 104)');
    });
    it('an unknown runner discriminant', () => {
      const e = decodeError(frame(bytes(1, 0, 1, 'r', 0, 0, 6, 0, 0)));
      expect([e.offset, e.reason]).to.deep.equal([4 + 6, 'unknown runner discriminant 6']);
    });
    it('a bad status byte', () => {
      const e = decodeError(frame(bytes(0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0, 4)));
      expect([e.offset, e.reason]).to.deep.equal([4 + 12, 'unknown job status byte 4']);
    });
    it('a string running past the end of the payload', () => {
      const e = decodeError(frame(bytes(2, 0, 10, 'abc')));
      expect(e.offset).to.equal(5);
      expect(e.reason).to.match(/job identifier \(10 bytes\) runs past the end/);
    });
    it('a truncated length prefix', () => {
      expect(decodeError(frame(bytes(2, 0))).reason).to.match(/length of job identifier runs past/);
    });
    it('a job without its execution or status', () => {
      expect(decodeError(frame(bytes(0, 0, 1, 'a', 0, 0, 0))).reason).to.match(/execution runs past/);
      expect(decodeError(frame(bytes(0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0))).reason).to.match(/status is missing/);
    });
    it('a list count larger than its items', () => {
      expect(decodeError(frame(bytes(1, 0, 1, 'd', 0, 0, 2, 0, 1, 'x', 0, 2, 0, 1, 'a'))).reason).to.match(/direct args\[1\]/);
    });
    it('trailing bytes inside a payload', () => {
      const e = decodeError(frame(bytes(2, 0, 1, 'a', 0, 0)), 7);
      expect([e.offset, e.reason]).to.deep.equal([7 + 8, '2 trailing bytes after the record']);
    });
    it('invalid UTF-8', () => {
      expect(decodeError(frame(bytes(2, 0, 2, 0xc3, 0x28))).reason).to.match(/not valid UTF-8/);
    });
    it('an http method or redis command outside the allowed set', () => {
      expect(decodeError(frame(bytes(1, 0, 1, 'h', 0, 0, 4, 0, 5, 'PATCH', 0, 1, 'u'))).reason).to.match(/http method "PATCH"/);
      expect(decodeError(frame(bytes(1, 0, 1, 'r', 0, 0, 5, 0, 1, 'u', 0, 3, 'DEL', 0, 1, 'k'))).reason).to.match(/redis command "DEL"/);
    });
    it('a corrupt complete frame in a stream throws rather than being skipped', () => {
      const buf = Buffer.concat([frame(VECTORS[0]![2]), frame(bytes(7)), frame(VECTORS[1]![2])]);
      expect(() => forEachFrame(buf, 0, () => {})).to.throw(RecordDecodeError, /record at byte offset 20 /);
    });
  });

  describe('extension records', () => {
    const newer = (buf: Buffer, base = 0): NewerRecordError => {
      const e = decodeError(buf, base);
      expect(e).to.be.instanceOf(NewerRecordError);
      return e as NewerRecordError;
    };

    it('this tickd is at format 6', () => {
      expect(FORMAT_VERSION).to.equal(6);
    });

    it('the format mark: type 4, then the format, big-endian, and nothing else', () => {
      const mark: LogRecord = { t: 'format', version: 2 };
      expect(encodeRecord(mark).toString('hex')).to.equal(frame(bytes(4, 0, 2)).toString('hex'));
      expect(decodePayload(frame(bytes(4, 0, 2)), 4)).to.deep.equal(mark);
    });

    it('a record that needs a newer format is refused as such, whatever its body', () => {
      // type 0x10, needs 7: the body is unknown by definition, so it is never looked at
      for (const body of [bytes(), bytes(0xff), bytes(0, 200, 'x'), Buffer.alloc(100, 0xee)]) {
        const e = newer(frame(Buffer.concat([bytes(0x10, 0, 7), body])), 380);
        expect(e).to.include({ needs: 7, frameOffset: 380, offset: 385 });
        expect(e.message).to.equal('a record of tickd format 7 at byte offset 380; this tickd reads format 6 and older: upgrade tickd to read this log');
      }
      // a known extension type too: a format mark of a later format is a later writer's
      expect(newer(frame(bytes(4, 0, 7)))).to.include({ needs: 7, frameOffset: 0 });
      expect(newer(frame(bytes(4, 0x01, 0x00)))).to.include({ needs: 256 });
      expect(newer(frame(bytes(0xff, 0xff, 0xff, 1, 2, 3)), 7).message).to.match(/^a record of tickd format 65535 at byte offset 7;/);
    });

    it('a newer record is still a RecordDecodeError: readers that do not tell them apart refuse it too', () => {
      const buf = Buffer.concat([frame(VECTORS[0]![2]), frame(bytes(0x10, 0, 7, 1)), frame(VECTORS[1]![2])]);
      expect(() => forEachFrame(buf, 0, () => {})).to.throw(NewerRecordError, /format 7 at byte offset 20;/);
      expect(() => forEachFrame(buf, 0, () => {})).to.throw(RecordDecodeError);
    });

    it('an extension type this format should know but does not is damage', () => {
      for (const needs of [0, 1, FORMAT_VERSION]) {
        const e = decodeError(frame(bytes(0x10, 0, needs)), 40);
        expect(e).to.not.be.instanceOf(NewerRecordError);
        expect([e.frameOffset, e.offset, e.reason]).to.deep.equal([40, 44, 'unknown record type byte 16']);
      }
    });

    it('a broken format mark is damage: no format, a format without extension records, trailing bytes', () => {
      expect(decodeError(frame(bytes(4, 0))).reason).to.match(/format needed by record type 4 runs past the end/);
      expect(decodeError(frame(bytes(4))).reason).to.match(/format needed by record type 4 runs past the end/);
      for (const v of [0, 1]) {
        const e = decodeError(frame(bytes(4, 0, v)));
        expect(e).to.not.be.instanceOf(NewerRecordError);
        expect(e.reason).to.equal(`format mark ${v}: no format before 2 has extension records`);
      }
      expect(decodeError(frame(bytes(4, 0, 2, 0))).reason).to.equal('1 trailing bytes after the record');
    });

    it('the encoder writes only a format mark this tickd could read back', () => {
      for (const version of [0, 1, 7, 2.5, 65536]) {
        expect(() => encodeRecord({ t: 'format', version })).to.throw(RecordEncodeError).with.property('code', 'format_out_of_range');
      }
    });

    it('ztick\'s type bytes 0 to 3 read no `needs`: their bytes are as before (the vectors above)', () => {
      // a removal whose identifier is 3 bytes long: were `needs` read, it would say format 3
      expect(decodePayload(frame(bytes(2, 0, 3, 'abc')), 4)).to.deep.equal({ t: 'job.removed', id: 'abc' });
    });
  });

  describe('encoding limits', () => {
    const job = (id: string): LogRecord => ({ t: 'job', job: { id, execution: 0n, status: 'planned' } });
    it('accepts a 65535-byte string and refuses 65536 bytes', () => {
      expect(encodeRecord(job('x'.repeat(65535))).length).to.equal(4 + 1 + 2 + 65535 + 9);
      expect(() => encodeRecord(job('x'.repeat(65536)))).to.throw(RecordEncodeError, /65536 bytes/).with.property('code', 'string_too_long');
      // 21846 three-byte characters = 65538 bytes although only 21846 UTF-16 units
      expect(() => encodeRecord(job('☃'.repeat(21846)))).to.throw(RecordEncodeError).with.property('code', 'string_too_long');
    });
    it('refuses a list of more than 65535 items', () => {
      const rec: LogRecord = { t: 'rule', rule: { id: 'd', pattern: '', runner: { type: 'direct', executable: 'x', args: new Array<string>(65536).fill('') } } };
      expect(() => encodeRecord(rec)).to.throw(RecordEncodeError).with.property('code', 'list_too_long');
    });
    it('refuses a payload over the frame limit', () => {
      const big = 'y'.repeat(65535);
      const rec: LogRecord = { t: 'rule', rule: { id: 'd', pattern: '', runner: { type: 'direct', executable: 'x', args: new Array<string>(300).fill(big) } } };
      expect(() => encodeRecord(rec)).to.throw(RecordEncodeError).with.property('code', 'record_too_large');
    });
    it('refuses an execution outside i64', () => {
      const rec: LogRecord = { t: 'job', job: { id: 'a', execution: 2n ** 63n, status: 'planned' } };
      expect(() => encodeRecord(rec)).to.throw(RecordEncodeError).with.property('code', 'execution_out_of_range');
    });
  });
});
