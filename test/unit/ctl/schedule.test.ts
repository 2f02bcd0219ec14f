// `tickd ctl sched` before and after the wire (lib/ctl/schedule-commands.ts, lib/client/schedule-lines.ts,
// schedule-output.ts, completion.ts): KEY=VALUE words checked as the daemon checks them and
// quoted as whole tokens, every line the daemon's formatter writes read back exactly, lines
// that are not schedule answers refused, times shown in UTC and in the schedule's zone across
// DST, the JSON in the HTTP shape, completion of the subcommands and of `sched set`'s keys.
import { expect } from 'chai';
import { PREPARE } from '../../../lib/ctl/commands.ts';
import { UsageError } from '../../../lib/ctl/errors.ts';
import { completionScript } from '../../../lib/ctl/completion.ts';
import { complete } from '../../../lib/ctl/repl.ts';
import { scheduleSetLine } from '../../../lib/ctl/schedule-commands.ts';
import { historyCells, historyJson, localTime, nextCells, scheduleCells, scheduleJson, scheduleRows } from '../../../lib/ctl/schedule-output.ts';
import { parseHistoryLine, parseInstantLine, parseScheduleLine } from '../../../lib/client/schedule-lines.ts';
import { tokenize } from '../../../lib/protocol/tokenize.ts';
import { scheduleLine } from '../../../lib/protocol/schedule-format.ts';
import { readSchedule, type Schedule } from '../../../lib/schedule/spec.ts';
import type { ScheduleView } from '../../../lib/domain/schedule.ts';

const NOW = 1_775_822_400_000_000_000n; // 2026-04-10T12:00:00Z
const input = { nowNs: NOW, options: {} };
const ns = (iso: string): bigint => BigInt(Date.parse(iso)) * 1_000_000n;

function usageError(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).to.be.instanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
}

function schedule(id: string, fields: Record<string, unknown>): Schedule {
  const r = readSchedule(id, fields);
  if (!('schedule' in r)) throw new Error(`${r.field}: ${r.error}`);
  return r.schedule;
}

function view(s: Schedule, next: bigint | null, counts: [number, number, number] = [0, 0, 0]): ScheduleView {
  return {
    state: { schedule: s, decided: 0n, next: null, fired: counts[0], skippedMissed: counts[1], skippedOverlap: counts[2], held: null, fires: [], manual: [], skips: [] },
    next,
  };
}

describe('ctl/sched arguments', () => {
  it('sends each KEY=VALUE as one token, quoted as a whole when it has spaces', () => {
    const line = scheduleSetLine('nightly.backup', ['cron=0 30 2 * * *', 'tz=Europe/Berlin', 'missed=all'], NOW);
    expect(line).to.equal('SCHEDULE SET nightly.backup "cron=0 30 2 * * *" tz=Europe/Berlin missed=all');
    expect(tokenize(line)).to.deep.equal(['SCHEDULE', 'SET', 'nightly.backup', 'cron=0 30 2 * * *', 'tz=Europe/Berlin', 'missed=all']);
    expect(scheduleSetLine('s', ['every=30s', 'paused=true', 'keep=0'], NOW)).to.equal('SCHEDULE SET s every=30s paused=true keep=0');
  });

  it('sends start and end as nanoseconds, from any WHEN form', () => {
    const line = scheduleSetLine('s', ['every=1h', 'start=+1h', 'end=2030-01-01T03:00:00+01:00', 'limit=3'], NOW);
    expect(line).to.equal(`SCHEDULE SET s every=1h start=${NOW + 3_600_000_000_000n} end=${ns('2030-01-01T02:00:00Z')} limit=3`);
    expect(scheduleSetLine('s', ['every=1h', 'start=2030-01-01 02:00:00'], NOW)).to.equal(`SCHEDULE SET s every=1h start=${ns('2030-01-01T02:00:00Z')}`);
  });

  it('refuses a bad field before connecting, naming it', () => {
    const set = (...words: string[]): string => usageError(() => PREPARE['sched set'](['s', ...words], input));
    expect(set('cron=0', '30', '2')).to.match(/^expected KEY=VALUE, not "30" \(quote a value that has spaces/);
    expect(set('=5')).to.match(/^expected KEY=VALUE, not "=5"/);
    expect(set('every=1m', 'colour=red')).to.match(/^colour: unknown field \(known: cron, every, tz/);
    expect(set('every=1m', 'tz=UTC', 'tz=UTC')).to.equal('tz: given twice');
    expect(set('every=1m', 'tz=Mars/Olympus')).to.match(/^tz: "Mars\/Olympus" is not a time zone/);
    expect(set('cron=61 * * * *')).to.match(/^cron: /);
    expect(set('tz=UTC')).to.equal('cron: give exactly one of cron and every');
    expect(set('cron=* * * * *', 'every=1m')).to.equal('every: give exactly one of cron and every');
    expect(set('every=1m', 'missed=sometimes')).to.equal('missed: must be skip, once or all');
    expect(set('every=1m', 'start=soon')).to.match(/^start: invalid WHEN "soon"/);
    expect(set('every=1m', 'start=+2h', 'end=+1h')).to.equal('end: must be after start');
    expect(set(`cron=* * * * *`, `tz=${'A'.repeat(5000)}`)).to.match(/^tz: /);
    expect(usageError(() => PREPARE['sched set'](['a b', 'every=1m'], input))).to.match(/^schedule identifier contains invalid character space/);
    expect(usageError(() => PREPARE['sched set'](['x'.repeat(1000), 'every=1m'], input))).to.match(/^schedule identifier too long/);
  });

  it('checks identifiers, prefixes and N of the other commands', () => {
    for (const name of ['sched get', 'sched rm', 'sched pause', 'sched resume', 'sched run', 'sched next', 'sched history'] as const) {
      expect(PREPARE[name](['nightly.backup'], input), name).to.be.a('function');
      expect(usageError(() => PREPARE[name](['a/b'], input)), name).to.match(/^schedule identifier contains invalid character '\/'/);
    }
    expect(PREPARE['sched ls']([], input)).to.be.a('function');
    expect(usageError(() => PREPARE['sched ls'](['a b'], input))).to.match(/^prefix contains invalid character space/);
    expect(PREPARE['sched next'](['s', '100'], input)).to.be.a('function');
    expect(PREPARE['sched history'](['s', '1'], input)).to.be.a('function');
    for (const n of ['0', '101', '-1', 'x', '5.0', '']) {
      expect(usageError(() => PREPARE['sched next'](['s', n], input)), n).to.match(/^N must be an integer from 1 to 100/);
      expect(usageError(() => PREPARE['sched history'](['s', n], input)), n).to.match(/^N must be an integer from 1 to 100/);
    }
  });
});

describe('ctl/sched replies', () => {
  it('reads back every schedule line the daemon\'s formatter writes', () => {
    const cron = schedule('nightly.backup', { cron: '0 30 2 * * *', tz: 'Europe/Berlin', start: '1893466800000000001', limit: '5', paused: 'true' });
    const s = parseScheduleLine(scheduleLine(view(cron, 1_893_466_800_123_456_789n, [3, 2, 1])))!;
    expect(s).to.deep.equal({
      id: 'nightly.backup',
      options: [['cron', '0 30 2 * * *'], ['tz', 'Europe/Berlin'], ['start', '1893466800000000001'], ['limit', '5'], ['jitter', '0s'], ['missed', 'once'], ['catchup', '1h'], ['overlap', 'allow'], ['paused', 'true'], ['keep', '10']],
      next: 1_893_466_800_123_456_789n,
      fired: 3n,
      skippedMissed: 2n,
      skippedOverlap: 1n,
    });
    const every = parseScheduleLine(scheduleLine(view(schedule('OK', { every: '90s' }), null)))!;
    expect(every.id).to.equal('OK');
    expect(every.next).to.equal(null);
  });

  it('refuses what is not a schedule line', () => {
    for (const line of [
      'ERROR not_found schedule "x" does not exist',
      'ERROR invalid_args tz: bad',
      's every=1m tz=UTC',
      's every=1m next=5 fired=1 skipped_missed=0',
      's every=1m next=soon fired=1 skipped_missed=0 skipped_overlap=0',
      's tz=UTC next=none fired=0 skipped_missed=0 skipped_overlap=0',
      's every=1m limit=many next=none fired=0 skipped_missed=0 skipped_overlap=0',
      's every=1m every=2m next=none fired=0 skipped_missed=0 skipped_overlap=0',
      'a/b every=1m next=none fired=0 skipped_missed=0 skipped_overlap=0',
      '"s every=1m',
    ]) expect(parseScheduleLine(line), line).to.equal(null);
  });

  it('reads NEXT and HISTORY lines', () => {
    expect(parseInstantLine('1893466800123456789')).to.equal(1_893_466_800_123_456_789n);
    expect(parseInstantLine('ERROR not_found x')).to.equal(null);
    expect(parseHistoryLine('1893466800000000000 executed s:20300101T030000Z')).to.deep.equal({ nominal: 1_893_466_800_000_000_000n, job: 's:20300101T030000Z', outcome: 'executed' });
    expect(parseHistoryLine('5 skipped - reason=missed from=1 count=3')).to.deep.equal({ nominal: 5n, job: null, outcome: 'skipped', reason: 'missed', from: 1n, count: 3 });
    expect(parseHistoryLine('7 planned s:manual-19700101T000000.000000007Z manual')).to.deep.equal({ nominal: 7n, job: 's:manual-19700101T000000.000000007Z', outcome: 'planned', manual: true });
    for (const line of ['ERROR not_found schedule "s" does not exist', '5 exploded s:x', '5 skipped - reason=boredom', '5 executed s:x extra', 'x executed s:x']) {
      expect(parseHistoryLine(line), line).to.equal(null);
    }
  });
});

describe('ctl/sched output', () => {
  const s = parseScheduleLine('nightly.backup "cron=0 30 2 * * *" tz=Europe/Berlin start=1893466800000000001 jitter=0s missed=once catchup=1h overlap=allow paused=false keep=10 next=1893466800123456789 fired=3 skipped_missed=2 skipped_overlap=1')!;

  it('lists a schedule in one row and shows one in full, instants as RFC 3339', () => {
    expect(scheduleCells(s)).to.deep.equal(['nightly.backup', '0 30 2 * * *', 'Europe/Berlin', '2030-01-01T03:00:00.123456789Z', 'false', '3', '3']);
    const every = parseScheduleLine('e every=1h30m tz=UTC paused=true next=none fired=0 skipped_missed=0 skipped_overlap=0')!;
    expect(scheduleCells(every)).to.deep.equal(['e', 'every 1h30m', 'UTC', 'none', 'true', '0', '0']);
    expect(scheduleRows(s)).to.deep.include.members([['start', '2030-01-01T03:00:00.000000001Z'], ['next', '2030-01-01T03:00:00.123456789Z'], ['skipped_overlap', '1']]);
    expect(scheduleRows(s)[0]).to.deep.equal(['id', 'nightly.backup']);
  });

  it('writes the HTTP JSON shape, every field present, integers exact', () => {
    expect(scheduleJson(s)).to.equal('{"id":"nightly.backup","cron":"0 30 2 * * *","every":null,"tz":"Europe/Berlin","start":1893466800000000001,"end":null,'
      + '"limit":null,"jitter":"0s","missed":"once","catchup":"1h","overlap":"allow","paused":false,"keep":10,"next":1893466800123456789,"fired":3,'
      + '"skipped":{"missed":2,"overlap":1}}');
    expect(JSON.parse(scheduleJson(s, 's:x')).job).to.equal('s:x');
  });

  it('shows a preview in the schedule\'s zone, the two copies of a repeated hour told apart by their offset', () => {
    expect(localTime(ns('2026-03-29T00:30:00Z'), 'Europe/Berlin')).to.equal('2026-03-29T01:30:00.000000000+01:00');
    expect(localTime(ns('2026-03-29T01:30:00Z'), 'Europe/Berlin')).to.equal('2026-03-29T03:30:00.000000000+02:00');
    expect(localTime(ns('2026-11-01T05:30:00Z'), 'America/New_York')).to.equal('2026-11-01T01:30:00.000000000-04:00');
    expect(localTime(ns('2026-11-01T06:30:00Z') + 7n, 'America/New_York')).to.equal('2026-11-01T01:30:00.000000007-05:00');
    expect(localTime(-1n, 'UTC')).to.equal('1969-12-31T23:59:59.999999999+00:00');
    expect(localTime(0n, 'Mars/Olympus')).to.equal(null);
    expect(nextCells(ns('2026-03-29T01:30:00Z'), 'Europe/Berlin')).to.deep.equal(['2026-03-29T01:30:00.000000000Z', '2026-03-29T03:30:00.000000000+02:00']);
    expect(nextCells(0n, null)).to.deep.equal(['1970-01-01T00:00:00.000000000Z', '-']);
  });

  it('shows a history entry with its reason, a range of skips and a manual run', () => {
    const skip = parseHistoryLine('5000000000 skipped - reason=overlap from=1000000000 count=5')!;
    expect(historyCells(skip)).to.deep.equal(['1970-01-01T00:00:05.000000000Z', 'skipped', '-', 'overlap (5 from 1970-01-01T00:00:01.000000000Z)']);
    expect(historyCells(parseHistoryLine('5 skipped - reason=missed from=5 count=1')!)[3]).to.equal('missed');
    expect(historyCells(parseHistoryLine('5 executed s:m manual')!)).to.deep.equal(['1970-01-01T00:00:00.000000005Z', 'executed', 's:m', 'manual']);
    expect(historyJson(skip)).to.equal('{"nominal":5000000000,"job":null,"outcome":"skipped","reason":"overlap","from":1000000000,"count":5}');
    expect(historyJson(parseHistoryLine('5 planned s:m manual')!)).to.equal('{"nominal":5,"job":"s:m","outcome":"planned","manual":true}');
  });
});

describe('ctl/sched completion', () => {
  it('the prompt completes the sched subcommands', () => {
    expect(complete('sch')).to.deep.equal([['sched'], 'sch']);
    expect(complete('sched ')).to.deep.equal([['set', 'get', 'ls', 'rm', 'next', 'pause', 'resume', 'run', 'history'], '']);
  });

  it('both scripts offer the KEY= names after sched set ID, with no space after them', () => {
    for (const shell of ['bash', 'zsh']) {
      const text = completionScript(shell);
      expect(text, shell).to.include("'sched set '*) list='cron= every= tz= start= end= limit= jitter= missed= catchup= overlap= paused= keep='; nospace=1 ;;");
      expect(text, shell).to.match(/'sched next'\) cmd='tickd ctl --timeout 1s sched ls --raw/);
    }
  });

});
