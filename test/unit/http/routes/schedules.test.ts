import { expect } from 'chai';
import { occurrenceToJson, scheduleFromBody, scheduleToJson } from '../../../../lib/http/routes/schedules.ts';
import { SCHEDULE_INPUT_EXAMPLES, SCHEDULE_STORED_EXAMPLES } from '../../../../lib/http/openapi-schedules.ts';
import { parseJsonBytes, exactIntegers } from '../../../../lib/http/body.ts';
import { toJson, type JsonValue } from '../../../../lib/http/json.ts';
import type { Schedule, ScheduleState, ScheduleView } from '../../../../lib/domain/schedule.ts';

/** A view of `schedule` as the primary would answer it. */
function view(schedule: Schedule, next: bigint | null = null, counts: Partial<ScheduleState> = {}): ScheduleView {
  const state: ScheduleState = {
    schedule, decided: 0n, next: null, fired: 0, skippedMissed: 0, skippedOverlap: 0, held: null, fires: [], manual: [], skips: [], ...counts,
  };
  return { state, next };
}

/** The body as the route reads it: through the JSON text, integers kept exact. */
function fromText(id: string, text: string): Schedule | string {
  const body = parseJsonBytes(Buffer.from(text), exactIntegers);
  if (!body.ok) throw new Error(body.message);
  return scheduleFromBody(id, body.value);
}

const asSchedule = (v: Schedule | string): Schedule => {
  if (typeof v === 'string') throw new Error(v);
  return v;
};

describe('http/routes/schedules', () => {
  describe('scheduleFromBody', () => {
    it('fills in every default', () => {
      expect(scheduleFromBody('s.1', { cron: '*/5 * * * *' })).to.deep.equal({
        id: 's.1', cron: '*/5 * * * *', every: null, tz: 'UTC', start: null, end: null, limit: null,
        jitter: 0n, missed: 'once', catchup: 3_600_000_000_000n, overlap: 'allow', paused: false, keep: 10,
      });
    });

    it('takes JSON values as they are: numbers, strings, booleans, null for absent', () => {
      const s = asSchedule(scheduleFromBody('s.2', {
        every: '1h30m', tz: 'Europe/Berlin', start: '2030-01-01T00:00:00+01:00', end: '1893542400000000000', limit: 3,
        jitter: '2s', missed: 'all', catchup: '10m', overlap: 'queue', paused: true, keep: 0, cron: null,
      }));
      expect(s).to.deep.include({
        every: 5_400_000_000_000n, cron: null, tz: 'Europe/Berlin', start: 1893452400000000000n, end: 1893542400000000000n, limit: 3,
        jitter: 2_000_000_000n, missed: 'all', catchup: 600_000_000_000n, overlap: 'queue', paused: true, keep: 0,
      });
      expect(asSchedule(scheduleFromBody('s.2', { every: '1s', start: 1_000_000, end: 2_000_000 }))).to.deep.include({ start: 1_000_000n, end: 2_000_000n });
    });

    it('reads an integer beyond 2^53 exactly (body parsed with exactIntegers)', () => {
      const s = asSchedule(fromText('s.3', '{"every":"1s","start":1893484800123456789,"end":"1893484900000000001"}'));
      expect([s.start, s.end]).to.deep.equal([1893484800123456789n, 1893484900000000001n]);
      // Without the reviver the same digits would be a rounded double, which is refused rather than moved.
      expect(scheduleFromBody('s.3', { every: '1s', start: 1893484800123456789 })).to.match(/^start: /);
    });

    it('names the field at fault as "<field>: <why>"', () => {
      const cases: Array<[unknown, RegExp]> = [
        [{}, /^cron: give exactly one of cron and every$/],
        [{ cron: '* * * * *', every: '1m' }, /^every: give exactly one/],
        [{ cron: 'not cron' }, /^cron: /],
        [{ cron: 5 }, /^cron: /],
        [{ every: '0s' }, /^every: must be from 1s/],
        [{ every: 30 }, /^every: not a duration/],
        [{ cron: '* * * * *', tz: 'Mars/Olympus' }, /^tz: /],
        [{ cron: '* * * * *', tz: '+01:00' }, /^tz: /],
        [{ cron: '* * * * *', start: 'tomorrow' }, /^start: /],
        [{ cron: '* * * * *', start: true }, /^start: /],
        [{ cron: '* * * * *', start: 20, end: 10 }, /^end: must be after start$/],
        [{ cron: '* * * * *', limit: 0 }, /^limit: /],
        [{ cron: '* * * * *', limit: 1.5 }, /^limit: /],
        [{ every: '10s', jitter: '10s' }, /^jitter: must be shorter than every/],
        [{ cron: '* * * * *', missed: 'never' }, /^missed: must be skip, once or all$/],
        [{ cron: '* * * * *', catchup: '0s' }, /^catchup: /],
        [{ cron: '* * * * *', overlap: 'replace' }, /^overlap: must be allow, skip or queue$/],
        [{ cron: '* * * * *', paused: 'yes' }, /^paused: must be true or false$/],
        [{ cron: '* * * * *', keep: 1001 }, /^keep: /],
        [{ cron: '* * * * *', interval: '1m' }, /^interval: unknown field/],
        [{ cron: '* * * * *', id: 'other' }, /^id: must equal the id in the path$/],
      ];
      for (const [body, re] of cases) expect(scheduleFromBody('s', body), JSON.stringify(body)).to.match(re);
      expect(scheduleFromBody('s', [])).to.equal('request body must be a JSON object');
      expect(scheduleFromBody('s', null)).to.equal('request body must be a JSON object');
      expect(scheduleFromBody('x'.repeat(991), { cron: '* * * * *' })).to.match(/^id: schedule identifier too long/);
    });

    it('refuses instants outside i64 nanoseconds, as TCP does, and a __proto__ member as an unknown field', () => {
      expect(fromText('s.r', '{"every":"1h","start":100000000000000000000000}')).to.match(/^start: out of range \(i64 nanoseconds/);
      expect(fromText('s.r', '{"every":"1h","end":-9223372036854775809}')).to.match(/^end: out of range/);
      expect(asSchedule(fromText('s.r', '{"every":"1h","end":9223372036854775807}')).end).to.equal(9223372036854775807n);
      expect(fromText('s.p', '{"every":"1s","__proto__":{"foo":1}}')).to.match(/^__proto__: unknown field/);
      expect(fromText('s.p', '{"__proto__":{"every":"1h"}}')).to.match(/^__proto__: unknown field/);
    });

    it('takes back what GET answered: the id, and next, fired and skipped left aside', () => {
      const stored = asSchedule(scheduleFromBody('s.back', { every: '30s', start: 1893484800123456789n, limit: 7, paused: true }));
      const answered = toJson(scheduleToJson(view(stored, 1893484830123456789n, { fired: 4, skippedMissed: 1 })));
      expect(fromText('s.back', answered)).to.deep.equal(stored);
      expect(fromText('s.other', answered)).to.equal('id: must equal the id in the path');
    });

    it('reads every documented input example to the documented stored schedule', () => {
      for (const [name, [, input]] of Object.entries(SCHEDULE_INPUT_EXAMPLES)) {
        const stored = SCHEDULE_STORED_EXAMPLES[name as keyof typeof SCHEDULE_STORED_EXAMPLES];
        const s = asSchedule(fromText(stored.id, toJson(input as JsonValue)));
        const json = JSON.parse(toJson(scheduleToJson(view(s, stored.next, { fired: stored.fired, skippedMissed: stored.skipped.missed, skippedOverlap: stored.skipped.overlap })))) as unknown;
        expect(json, name).to.deep.equal(JSON.parse(toJson(stored as JsonValue)));
      }
    });
  });

  describe('scheduleToJson', () => {
    it('writes id, the fields in their order (cron and every both, one null), next, fired, skipped; nanoseconds exact', () => {
      const s = asSchedule(scheduleFromBody('night', { cron: '30 2 * * *', tz: 'Europe/Berlin', end: 1893484800123456789n }));
      const text = toJson(scheduleToJson(view(s, 1795829400000000001n, { fired: 41, skippedMissed: 2, skippedOverlap: 3 })));
      expect(text).to.equal('{"id":"night","cron":"30 2 * * *","every":null,"tz":"Europe/Berlin","start":null,"end":1893484800123456789,'
        + '"limit":null,"jitter":"0s","missed":"once","catchup":"1h","overlap":"allow","paused":false,"keep":10,'
        + '"next":1795829400000000001,"fired":41,"skipped":{"missed":2,"overlap":3}}');
    });

    it('writes an interval as a duration, cron null, and next null when none is left', () => {
      const s = asSchedule(scheduleFromBody('tick', { every: '90s', jitter: '1500ms', limit: 5 }));
      expect(JSON.parse(toJson(scheduleToJson(view(s))))).to.deep.include({ cron: null, every: '1m30s', jitter: '1s500ms', limit: 5, next: null });
    });
  });

  describe('occurrenceToJson', () => {
    it('writes nominal, job and outcome, and the optional fields only when set', () => {
      expect(toJson(occurrenceToJson({ nominal: 1795743000000000001n, job: 'n:20261127T013000.000000001Z', outcome: 'executed' })))
        .to.equal('{"nominal":1795743000000000001,"job":"n:20261127T013000.000000001Z","outcome":"executed"}');
      expect(toJson(occurrenceToJson({ nominal: 3n, job: null, outcome: 'skipped', reason: 'overlap', from: 1n, count: 2 })))
        .to.equal('{"nominal":3,"job":null,"outcome":"skipped","reason":"overlap","from":1,"count":2}');
      expect(toJson(occurrenceToJson({ nominal: 5n, job: 'n:manual-x', outcome: 'planned', manual: true })))
        .to.equal('{"nominal":5,"job":"n:manual-x","outcome":"planned","manual":true}');
    });
  });
});
