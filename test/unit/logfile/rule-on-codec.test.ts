// The node tags a rule's jobs require (`on`, issue 40) in a type 8 record (doc/logfile-format.md,
// Retry records): flag bit 4, then the tags as the codec's list, after every other option; a
// record with them needs format 6, one without needs what it needed before (4, or 5 with
// retry.on), so a log that does not use `on` stays readable by older tickd.
import { expect } from 'chai';
import { decodePayload, encodeRecord, NewerRecordError, RecordEncodeError } from '../../../lib/logfile/codec.ts';
import { FORMAT_VERSION, PLACEMENT_FORMAT, RETRIES_FORMAT, RETRY_ON_FORMAT } from '../../../lib/domain/format.ts';
import { formatRecord } from '../../../lib/logfile/dump-format.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import type { RuleOptions } from '../../../lib/domain/rule-options.ts';
import { damage, FIXED, patched, ruleRec, S } from './option-records.ts';

const withTags = (on: readonly string[], rest: RuleOptions = {}): LogRecord => ruleRec({ ...rest, on });

describe('logfile/codec: the node tags a rule requires (on, format 6)', () => {
  const type1 = encodeRecord(ruleRec(undefined));
  /** Frame offset of the options' flags byte; with `on` alone, the tag count follows it. */
  const O = type1.length + 2;
  const T = O + 1;

  it('this tickd is at format 6, the one that adds them', () => {
    expect([PLACEMENT_FORMAT, FORMAT_VERSION]).to.deep.equal([6, 6]);
  });

  it('flag bit 4, then count:u16 and each tag as a str, in the order given, after every other option; needs 6', () => {
    const buf = encodeRecord(withTags(['db', 'eu']));
    expect([buf[4], buf[5], buf[6]]).to.deep.equal([8, 0, PLACEMENT_FORMAT]);
    expect(buf.subarray(7, O)).to.deep.equal(type1.subarray(5));
    expect(buf[O]).to.equal(16);
    expect([...buf.subarray(T)]).to.deep.equal([0, 2, 0, 2, 0x64, 0x62, 0, 2, 0x65, 0x75]);
    // after retry, its retry.on, concurrency and rate
    const all = encodeRecord(withTags(['gpu'], { retry: { ...FIXED, on: [{ kind: 'runner', value: 0 }] }, concurrency: 2, rate: { limit: 5, per: S } }));
    expect(all[6]).to.equal(PLACEMENT_FORMAT);
    expect(all[O]).to.equal(1 | 2 | 4 | 8 | 16);
    expect([...all.subarray(all.length - 7)]).to.deep.equal([0, 1, 0, 3, 0x67, 0x70, 0x75]);
  });

  it('round-trips alone and with every other option; without on a record needs 4, or 5 with retry.on, as before', () => {
    const sixteen = Array.from({ length: 16 }, (_, i) => `t${i}`);
    const long = `a${'b:._-'.repeat(10)}xyz`;
    const recs = [
      withTags(['db']), withTags(['eu', 'db']), withTags(sixteen), withTags([long]),
      withTags(['db'], { retry: FIXED, concurrency: 1, rate: { limit: 1, per: S } }),
      withTags(['db'], { retry: { ...FIXED, on: [{ kind: '5xx', value: 0 }] } }),
    ];
    for (const rec of recs) {
      const buf = encodeRecord(rec);
      expect(buf[6]).to.equal(PLACEMENT_FORMAT);
      expect(decodePayload(buf, 4)).to.deep.equal(rec);
    }
    const plain = encodeRecord(ruleRec({ retry: FIXED, concurrency: 1 }));
    expect([plain[5], plain[6]]).to.deep.equal([0, RETRIES_FORMAT]);
    expect((decodePayload(plain, 4) as { rule: { options: object } }).rule.options).to.not.have.property('on');
    const classes = encodeRecord(ruleRec({ retry: { ...FIXED, on: [{ kind: '5xx', value: 0 }] } }));
    expect(classes[6]).to.equal(RETRY_ON_FORMAT);
  });

  it('a tickd of format 5 meets a record with on as a newer tickd\'s, not as damage', () => {
    const buf = patched(withTags(['db']), (b) => { b[6] = FORMAT_VERSION + 1; });
    expect(() => decodePayload(buf, 4)).to.throw(NewerRecordError, /format 7 at byte offset 0/);
  });

  describe('the decoder refuses, as damage, naming where', () => {
    const rec = withTags(['db', 'eu']);
    const cases: [string, (b: Buffer) => void, string, number][] = [
      ['bit 4 in a record that says it needs format 5', (b) => { b[6] = 5; }, 'rule option flags 16: on needs format 6, the record says 5', O],
      ['bit 4 in a record that says it needs format 4', (b) => { b[6] = 4; }, 'rule option flags 16: on needs format 6, the record says 4', O],
      ['a tag given twice', (b) => { b[T + 8] = 0x64; b[T + 9] = 0x62; }, 'rule options: on "db" is given twice', O],
      ['a tag not of the form', (b) => { b[T + 4] = 0x2f; }, 'rule options: on a tag is 1 to 64 characters of letters, digits, "_", ".", ":" and "-", starting with a letter or digit, got "/b"', O],
      ['a bit above 4', (b) => { b[O] = 16 | 32; }, 'unknown rule option flags 48', O],
      ['a count past the bytes there are', (b) => { b[T + 1] = 3; }, 'on tag length runs past the end of the record', T + 10],
    ];
    for (const [what, patch, reason, offset] of cases) {
      it(what, () => {
        const e = damage(patched(rec, patch));
        expect([e.reason, e.offset]).to.deep.equal([reason, offset]);
      });
    }

    it('no tag with the flag set, and more than 16', () => {
      const none = Buffer.from(encodeRecord(rec).subarray(0, T + 2));
      none.writeUInt16BE(0, T);
      none.writeUInt32BE(none.length - 4, 0);
      expect(damage(none).reason).to.equal('rule options: on must name at least one node tag (omit it to run anywhere)');
      const many = Buffer.concat([encodeRecord(rec).subarray(0, T), Buffer.from([0, 17]),
        ...Array.from({ length: 17 }, (_, i) => Buffer.from([0, 2, 0x74, 0x61 + i]))]);
      many.writeUInt32BE(many.length - 4, 0);
      expect(damage(many).reason).to.equal('rule options: on at most 16 tags');
    });
  });

  it('the encoder refuses what the decoder would, before writing anything', () => {
    const bad: readonly (readonly string[])[] = [[], ['db', 'db'], ['-db'], ['a b'], ['é'], ['x'.repeat(65)], Array.from({ length: 17 }, (_, i) => `t${i}`)];
    for (const on of bad) expect(() => encodeRecord(withTags(on)), JSON.stringify(on)).to.throw(RecordEncodeError, /rule options: on /);
  });

  it('tickd dump shows them: on= in the text line (last option), "on" in the JSON rule object', () => {
    const rec = withTags(['db', 'eu'], { concurrency: 2 });
    expect(formatRecord(rec, 'text')).to.equal('rule RULE SET r p concurrency=2 on=db,eu shell c');
    expect(formatRecord(rec, 'json')).to.equal('{"type":"rule","id":"r","pattern":"p","runner":{"type":"shell","command":"c"},"concurrency":2,"on":["db","eu"]}');
  });
});
