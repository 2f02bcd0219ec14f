// The console's pure schedule helpers (lib/http/ui/console/schedule-format.js, a browser ES
// module that Node imports as is): a schedule's spec and counts on one line, why it has no
// next run, what a history entry means, and the form's request body and values (Edit keeps
// what the form does not show). Schedules come as the console reads them: parseExact turns
// every integer into its decimal string.
import { expect } from 'chai';

interface ScheduleFormat {
  KEPT_FIELDS: string[];
  specText(schedule: unknown): string;
  countsText(schedule: unknown): string;
  noNextText(schedule: unknown): string;
  occurrenceNote(o: unknown): string;
  scheduleBody(form: Record<string, string>, kept?: Record<string, unknown> | null): Record<string, unknown>;
  scheduleFormValues(schedule: Record<string, unknown>): Record<string, string>;
  keptFields(schedule: unknown): Record<string, unknown>;
}

// Through a URL so the type checker does not look for declarations of a plain .js module.
const MODULE = new URL('../../../../../lib/http/ui/console/schedule-format.js', import.meta.url).href;
const FORMAT = new URL('../../../../../lib/http/ui/console/format.js', import.meta.url).href;

// GET /schedules/nightly as the console parses it (format.js parseExact).
const NIGHTLY_TEXT = '{"id":"nightly","cron":"0 30 2 * * *","every":null,"tz":"Europe/Berlin","start":1775822400123456789,'
  + '"end":null,"limit":null,"jitter":"5m","missed":"all","catchup":"2h","overlap":"queue","paused":true,"keep":30,'
  + '"next":null,"fired":12,"skipped":{"missed":3,"overlap":1}}';

describe('http/ui/console/schedule-format.js', () => {
  let f: ScheduleFormat;
  let nightly: Record<string, unknown>;
  before(async () => {
    f = (await import(MODULE)) as ScheduleFormat;
    nightly = ((await import(FORMAT)) as { parseExact(text: string): Record<string, unknown> }).parseExact(NIGHTLY_TEXT);
  });

  it('specText names the kind and keeps the text as the API wrote it', () => {
    expect(f.specText(nightly)).to.equal('cron 0 30 2 * * *');
    expect(f.specText({ cron: null, every: '1h30m' })).to.equal('every 1h30m');
    expect(f.specText({ cron: null, every: null })).to.equal('?');
    expect(f.specText(null)).to.equal('?');
  });

  it('countsText: fired and both skip counts, exact; "?" for a missing one', () => {
    expect(f.countsText(nightly)).to.equal('12 fired · skipped: 3 missed, 1 overlap');
    expect(f.countsText({ fired: '18446744073709551615', skipped: { missed: '0', overlap: '0' } }))
      .to.equal('18446744073709551615 fired · skipped: 0 missed, 0 overlap');
    expect(f.countsText({ fired: '1' })).to.equal('1 fired · skipped: ? missed, ? overlap');
  });

  it('noNextText: paused first, then a reached limit, else ended', () => {
    expect(f.noNextText(nightly)).to.equal('none while paused');
    expect(f.noNextText({ paused: false, limit: '5', fired: '5' })).to.equal('none (limit reached)');
    expect(f.noNextText({ paused: false, limit: '5', fired: '4' })).to.equal('none (ended)');
    expect(f.noNextText({ paused: false, limit: null, fired: '9' })).to.equal('none (ended)');
  });

  describe('occurrenceNote', () => {
    it('says why an occurrence was skipped, with the range of a skip of several', () => {
      expect(f.occurrenceNote({ nominal: '1775822400000000000', job: null, outcome: 'skipped', reason: 'overlap', from: '1775822400000000000', count: '1' }))
        .to.equal('skipped: overlap (the previous occurrence was still running)');
      expect(f.occurrenceNote({ nominal: '1775822460000000000', job: null, outcome: 'skipped', reason: 'missed', from: '1775822400123456789', count: '3' }))
        .to.equal('skipped: missed (the daemon was not running or the schedule was paused); 3 occurrences from 2026-04-10T12:00:00.123456789Z');
      expect(f.occurrenceNote({ outcome: 'skipped', reason: 'later', count: '1' })).to.equal('skipped: later');
    });
    it('names held, removed and manual occurrences; nothing for a plain outcome', () => {
      expect(f.occurrenceNote({ outcome: 'held', job: 'x:20261127T023000Z' })).to.equal('held until the running occurrence ends (overlap queue)');
      expect(f.occurrenceNote({ outcome: 'removed', job: 'x:20261127T023000Z' })).to.equal('its job is gone (removed, or dropped by keep)');
      expect(f.occurrenceNote({ outcome: 'executed', job: 'x:manual-20261127T023000Z', manual: true })).to.equal('run now (manual)');
      expect(f.occurrenceNote({ outcome: 'executed', job: 'x:20261127T023000Z' })).to.equal('');
      expect(f.occurrenceNote({ outcome: 'failed', job: 'x:20261127T023000Z', manual: false })).to.equal('');
    });
  });

  describe('scheduleBody', () => {
    const form = { kind: 'every', spec: ' 1s ', tz: 'UTC', missed: 'once', overlap: 'allow', jitter: '', limit: '', keep: '' };
    it('sends the spec of the chosen kind only, trimmed, and leaves empty fields to the defaults', () => {
      expect(f.scheduleBody(form)).to.deep.equal({ every: '1s', tz: 'UTC', missed: 'once', overlap: 'allow' });
      expect(f.scheduleBody({ ...form, kind: 'cron', spec: '0 30 2 * * *', tz: ' ' })).to.deep.equal({ cron: '0 30 2 * * *', missed: 'once', overlap: 'allow' });
    });
    it('sends limit and keep as numbers when they are plain digits, else as typed (the API names the field)', () => {
      expect(f.scheduleBody({ ...form, limit: '5', keep: '0', jitter: '250ms' })).to.include({ limit: 5, keep: 0, jitter: '250ms' });
      expect(f.scheduleBody({ ...form, limit: '-1', keep: 'ten' })).to.include({ limit: '-1', keep: 'ten' });
      expect(f.scheduleBody({ ...form, limit: '99999999999' })).to.include({ limit: '99999999999' });
    });
    it('an empty spec is still sent (the API says what is wrong with it)', () => {
      expect(f.scheduleBody({ ...form, spec: '' })).to.include({ every: '' });
    });
    it('adds the kept fields of the schedule being edited, exact', () => {
      const kept = f.keptFields(nightly);
      expect(kept).to.deep.equal({ start: '1775822400123456789', catchup: '2h', paused: true });
      expect(f.scheduleBody(form, kept)).to.deep.equal({ every: '1s', tz: 'UTC', missed: 'once', overlap: 'allow', start: '1775822400123456789', catchup: '2h', paused: true });
      expect(f.KEPT_FIELDS).to.deep.equal(['start', 'end', 'catchup', 'paused']);
    });
  });

  it('scheduleFormValues is what the form shows for a schedule, and reads back to its fields', () => {
    const values = f.scheduleFormValues(nightly);
    expect(values).to.deep.equal({ kind: 'cron', spec: '0 30 2 * * *', tz: 'Europe/Berlin', missed: 'all', overlap: 'queue', jitter: '5m', limit: '', keep: '30' });
    expect(f.scheduleBody(values, f.keptFields(nightly))).to.deep.equal({
      cron: '0 30 2 * * *', tz: 'Europe/Berlin', missed: 'all', overlap: 'queue', jitter: '5m', keep: 30,
      start: '1775822400123456789', catchup: '2h', paused: true,
    });
    expect(f.scheduleFormValues({ id: 'x', cron: null, every: '1s', tz: 'UTC', limit: '3' })).to.include({ kind: 'every', spec: '1s', limit: '3', jitter: '' });
  });
});
