// Schedule records (doc/logfile-format.md: type 5, a schedule's state; type 6, its removal;
// both need format 3): every field round-trips exactly, and the decoder refuses what the
// layout does not allow, naming where.
import { expect } from 'chai';
import { decodePayload, encodeRecord, RecordDecodeError } from '../../../lib/logfile/codec.ts';
import { recordKey } from '../../../lib/logfile/frames.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import type { ScheduleState } from '../../../lib/domain/schedule.ts';
import { formatRecord } from '../../../lib/logfile/dump-format.ts';
import { parseLine } from '../../../lib/protocol/parse.ts';
import { tokenize } from '../../../lib/protocol/tokenize.ts';

const S = 1_000_000_000n;

const FULL: ScheduleState = {
  schedule: {
    id: 'billing.nightly', cron: '0 30 2 * * *', every: null, tz: 'Europe/Berlin', start: 1_700_000_000n * S, end: 1_900_000_000n * S,
    limit: 100, jitter: 30n * S, missed: 'all', catchup: 7200n * S, overlap: 'queue', paused: true, keep: 7,
  },
  decided: 1_800_000_000n * S + 123n, next: 1_800_000_060n * S, fired: 42, skippedMissed: 3, skippedOverlap: 1, held: 1_800_000_060n * S,
  fires: [1_799_999_940n * S, 1_800_000_000n * S], manual: [1_800_000_001n * S + 5n],
  skips: [{ reason: 'missed', from: 1n, to: 5n, count: 5 }, { reason: 'overlap', from: 7n, to: 7n, count: 1 }],
};
const BARE: ScheduleState = {
  schedule: {
    id: 'x', cron: null, every: 30n * S, tz: 'UTC', start: null, end: null, limit: null, jitter: 0n, missed: 'once', catchup: 3600n * S, overlap: 'allow', paused: false, keep: 10,
  },
  decided: -5n, next: null, fired: 0, skippedMissed: 0, skippedOverlap: 0, held: null, fires: [], manual: [], skips: [],
};

describe('logfile/codec: schedule records', () => {
  it('round-trips every field of a schedule and its removal, each with needs 3', () => {
    for (const rec of [{ t: 'schedule', state: FULL }, { t: 'schedule', state: BARE }, { t: 'schedule.removed', id: 'billing.nightly' }] as LogRecord[]) {
      const frame = encodeRecord(rec);
      expect(frame.readUInt32BE(0)).to.equal(frame.length - 4);
      expect([frame[5], frame[6]]).to.deep.equal([0, 3]);
      expect(decodePayload(frame, 4)).to.deep.equal(rec);
    }
    expect(encodeRecord({ t: 'schedule', state: FULL })[4]).to.equal(5);
    expect(encodeRecord({ t: 'schedule.removed', id: 'a' })[4]).to.equal(6);
  });

  it('a schedule and its removal are one entry for compaction, apart from a job or rule of the same name', () => {
    expect(recordKey({ t: 'schedule', state: BARE })).to.equal(recordKey({ t: 'schedule.removed', id: 'x' }));
    expect(recordKey({ t: 'schedule.removed', id: 'x' })).to.not.equal(recordKey({ t: 'job.removed', id: 'x' }));
    expect(recordKey({ t: 'schedule.removed', id: 'x' })).to.not.equal(recordKey({ t: 'rule.removed', id: 'x' }));
  });

  it('refuses a body that breaks the layout: trailing bytes, unknown bytes, a short body', () => {
    const good = encodeRecord({ t: 'schedule', state: BARE });
    const refuse = (frame: Buffer): RecordDecodeError => {
      try {
        decodePayload(frame, 4);
      } catch (err) {
        expect(err).to.be.instanceOf(RecordDecodeError);
        return err as RecordDecodeError;
      }
      throw new Error('decoded');
    };
    const withBody = (body: Buffer): Buffer => {
      const f = Buffer.alloc(4 + body.length);
      f.writeUInt32BE(body.length);
      body.copy(f, 4);
      return f;
    };
    const payload = good.subarray(4);
    expect(refuse(withBody(Buffer.concat([payload, Buffer.of(0)]))).reason).to.equal('1 trailing bytes after the record');
    expect(refuse(withBody(payload.subarray(0, payload.length - 1))).reason).to.match(/runs past the end of the record/);
    const badTiming = Buffer.from(payload);
    badTiming[3 + 2 + 1] = 9; // type, needs, id "x" (2 + 1 bytes), then the timing byte
    expect(refuse(withBody(badTiming)).reason).to.equal('unknown schedule timing byte 9');
  });

  it('tickd dump prints a schedule as the SCHEDULE SET line that makes it again, and every field in JSON', () => {
    for (const state of [FULL, BARE]) {
      const text = formatRecord({ t: 'schedule', state }, 'text');
      expect(text.startsWith(`schedule SCHEDULE SET ${state.schedule.id} `)).to.equal(true);
      const parsed = parseLine(tokenize(text)!);
      expect(parsed).to.deep.equal({ kind: 'command', rid: 'schedule', cmd: { op: 'schedule.set', schedule: state.schedule } });
      const json = JSON.parse(formatRecord({ t: 'schedule', state }, 'json')) as Record<string, unknown>;
      expect(json).to.include({ type: 'schedule', id: state.schedule.id, fired: state.fired, tz: state.schedule.tz });
      expect(Object.keys(json)).to.include.members(['decided', 'next', 'skipped', 'held', 'fires', 'manual', 'skips']);
    }
    expect(formatRecord({ t: 'schedule.removed', id: 'x' }, 'text')).to.equal('removed SCHEDULE REMOVE x');
  });
});
