// Schedule replies as TCP text (lib/protocol/schedule-format.ts): the schedule line, RUN's job,
// NEXT's instants, HISTORY's entries; the round trip of a schedule line through SCHEDULE SET;
// and SCHEDULE LIST streamed a page at a time and scoped to the token's namespace.
import { expect } from 'chai';
import { formatPageLines, formatReply } from '../../../lib/protocol/format.ts';
import { parseLine } from '../../../lib/protocol/parse.ts';
import { tokenize } from '../../../lib/protocol/tokenize.ts';
import { readSchedule } from '../../../lib/schedule/spec.ts';
import type { Reply } from '../../../lib/domain/command.ts';
import type { Schedule, ScheduleState, ScheduleView } from '../../../lib/domain/schedule.ts';
import { notFound } from '../../../lib/errors.ts';
import { PAGE_LOW_WATER } from '../../../lib/protocol/session.ts';
import { DONE, harness, settled, TOKENS } from './session-harness.ts';

function schedule(id: string, fields: Record<string, unknown>): Schedule {
  const r = readSchedule(id, fields);
  if (!('schedule' in r)) throw new Error(`${r.field}: ${r.error}`);
  return r.schedule;
}

function view(s: Schedule, next: bigint | null, counts: Partial<ScheduleState> = {}): ScheduleView {
  return {
    state: { schedule: s, decided: 0n, next: null, fired: 0, skippedMissed: 0, skippedOverlap: 0, held: null, fires: [], manual: [], skips: [], ...counts },
    next,
  };
}

const NIGHTLY = schedule('nightly.backup', { cron: '0 30 2 * * *', tz: 'Europe/Berlin' });
const EVERY = schedule('poll.x', { every: '90s', start: '1700000000000000000', end: '1800000000000000000', limit: '3', jitter: '5s', missed: 'all', catchup: '2h', overlap: 'queue', paused: 'true', keep: '0' });
/** Values that need quoting inside the option token. */
const ODD = schedule('odd', { cron: '0 0 1 * MON', tz: 'America/New_York' });

describe('protocol/schedule-format', () => {
  it('a schedule line: id, the set fields in canonical order, then next and the counters', () => {
    const line = formatReply('g', { ok: true, kind: 'schedule', schedule: view(NIGHTLY, 1796002200000000000n, { fired: 4, skippedMissed: 2, skippedOverlap: 1 }) });
    expect(line).to.equal('g OK nightly.backup "cron=0 30 2 * * *" tz=Europe/Berlin jitter=0s missed=once catchup=1h overlap=allow paused=false keep=10 '
      + 'next=1796002200000000000 fired=4 skipped_missed=2 skipped_overlap=1\n');
    expect(formatReply('g', { ok: true, kind: 'schedule', schedule: view(EVERY, null) })).to.equal(
      'g OK poll.x every=1m30s tz=UTC start=1700000000000000000 end=1800000000000000000 limit=3 jitter=5s missed=all catchup=2h overlap=queue paused=true keep=0 '
      + 'next=none fired=0 skipped_missed=0 skipped_overlap=0\n');
  });

  it('RUN answers the job it made, not the schedule', () => {
    expect(formatReply('r', { ok: true, kind: 'schedule', schedule: view(NIGHTLY, null), job: 'nightly.backup:manual-20261127T101500Z' }))
      .to.equal('r OK nightly.backup:manual-20261127T101500Z\n');
  });

  it('schedules: one line each then OK; an empty list is only OK; a page has no OK', () => {
    const reply: Extract<Reply, { kind: 'schedules' }> = { ok: true, kind: 'schedules', schedules: [view(NIGHTLY, 5n), view(ODD, 6n)], next: null };
    const lines = formatReply('l', reply).split('\n');
    expect(lines).to.have.length(4);
    expect(lines[0]).to.match(/^l nightly\.backup "cron=0 30 2 \* \* \*" .* next=5 /);
    expect(lines[1]).to.match(/^l odd "cron=0 0 1 \* MON" tz=America\/New_York .* next=6 /);
    expect(lines[2]).to.equal('l OK');
    expect(formatReply('l', { ok: true, kind: 'schedules', schedules: [], next: null })).to.equal('l OK\n');
    expect(formatPageLines('l', { ...reply, next: 9 })).to.equal(`${lines[0]}\n${lines[1]}\n`);
  });

  it('instants: one nanosecond count a line, then OK', () => {
    expect(formatReply('n', { ok: true, kind: 'instants', instants: [1n, 1796002200000000000n] })).to.equal('n 1\nn 1796002200000000000\nn OK\n');
    expect(formatReply('n', { ok: true, kind: 'instants', instants: [] })).to.equal('n OK\n');
  });

  it('occurrences: nominal, outcome, job or -, a skip\'s range, a manual mark', () => {
    const text = formatReply('h', {
      ok: true,
      kind: 'occurrences',
      occurrences: [
        { nominal: 300n, job: 'a:manual-19700101T000000.0000003Z', outcome: 'planned', manual: true },
        { nominal: 200n, job: null, outcome: 'skipped', reason: 'overlap', from: 200n, count: 1 },
        { nominal: 180n, job: null, outcome: 'skipped', reason: 'missed', from: 60n, count: 3 },
        { nominal: 50n, job: 'a:19700101T000000.00000005Z', outcome: 'executed' },
        { nominal: 40n, job: 'a:19700101T000000.00000004Z', outcome: 'removed' },
      ],
    });
    expect(text).to.equal([
      'h 300 planned a:manual-19700101T000000.0000003Z manual',
      'h 200 skipped - reason=overlap from=200 count=1',
      'h 180 skipped - reason=missed from=60 count=3',
      'h 50 executed a:19700101T000000.00000005Z',
      'h 40 removed a:19700101T000000.00000004Z',
      'h OK',
      '',
    ].join('\n'));
    expect(formatReply('h', { ok: true, kind: 'occurrences', occurrences: [] })).to.equal('h OK\n');
  });

  it('errors are ordinary error lines', () => {
    expect(formatReply('g', notFound('schedule', 'x'))).to.equal('g ERROR not_found schedule "x" does not exist\n');
  });

  it('round trip: a schedule line, less its request id and counters, reads back through SCHEDULE SET to the same schedule', () => {
    const samples = [NIGHTLY, EVERY, ODD, schedule('q', { cron: '*/15 * * * *', start: '-5', end: '2030-01-01T00:00:00.5Z', jitter: '1d' }),
      schedule('frac', { every: '1500ms', catchup: '366d' })];
    for (const s of samples) {
      const tokens = tokenize(formatReply('g', { ok: true, kind: 'schedule', schedule: view(s, 1n) }).trimEnd());
      expect(tokens, s.id).to.not.equal(null);
      expect(tokens!.slice(0, 3)).to.deep.equal(['g', 'OK', s.id]);
      const options = tokens!.slice(3).filter((t) => !/^(next|fired|skipped_missed|skipped_overlap)=/.test(t));
      expect(tokens!.length - 3 - options.length, s.id).to.equal(4);
      expect(parseLine(['p', 'SCHEDULE', 'SET', s.id, ...options]), s.id).to.deep.equal({ kind: 'command', rid: 'p', cmd: { op: 'schedule.set', schedule: s } });
    }
  });

  describe('in a session', () => {
    it('SCHEDULE LIST streams page by page, the next page asked for once the previous one was taken', async () => {
      const h = harness(null);
      h.feed('l SCHEDULE LIST nightly.\nafter STAT\n');
      expect(h.pending.map((p) => p.cmd)).to.deep.equal([{ op: 'schedule.list', prefix: 'nightly.', scope: '', cursor: 0, limit: 2048 }]);
      h.setBacklog(PAGE_LOW_WATER);
      h.pending.shift()!.answer({ ok: true, kind: 'schedules', schedules: [view(NIGHTLY, 5n)], next: 12 });
      await settled();
      expect(h.written()).to.match(/^l nightly\.backup .* next=5 fired=0 skipped_missed=0 skipped_overlap=0\n$/);
      expect(h.pending).to.have.length(0); // neither the next page nor the line after the listing
      h.setBacklog(0);
      h.session.writable();
      expect(h.pending.map((p) => p.cmd)).to.deep.equal([{ op: 'schedule.list', prefix: 'nightly.', scope: '', cursor: 12, limit: 2048 }]);
      h.pending.shift()!.answer({ ok: true, kind: 'schedules', schedules: [], next: null });
      await settled();
      expect(h.written()).to.match(/\nl OK\n$/);
      expect(h.pending.map((p) => p.cmd.op)).to.deep.equal(['stat']);
      h.pending.shift()!.answer(DONE);
      await settled();
      expect(h.written()).to.match(/\nl OK\nafter OK\n$/);
      expect(h.requests.map((r) => [r.rid, r.instruction, r.success])).to.deep.equal([['l', 'SCHEDULE LIST', true], ['after', 'STAT', true]]);
    });

    it('a namespace scopes LIST and refuses a schedule outside it, SET included', async () => {
      const h = harness(TOKENS);
      h.feed('AUTH secret-a\nl SCHEDULE LIST\ns SCHEDULE SET b.x every=1m\ng SCHEDULE GET b.x\nr SCHEDULE RUN a.x\n');
      await settled();
      expect(h.pending.map((p) => p.cmd)).to.deep.equal([{ op: 'schedule.list', prefix: '', scope: 'a.', cursor: 0, limit: 2048 }]);
      h.pending.shift()!.answer({ ok: true, kind: 'schedules', schedules: [], next: null });
      await settled();
      expect(h.pending.map((p) => p.cmd)).to.deep.equal([{ op: 'schedule.run', id: 'a.x' }]);
      h.pending.shift()!.answer({ ok: true, kind: 'schedule', schedule: view(schedule('a.x', { every: '1m' }), 60n), job: 'a.x:manual-20261127T000000Z' });
      await settled();
      expect(h.written()).to.equal('OK\nl OK\ns ERROR auth_denied insufficient namespace scope\ng ERROR auth_denied insufficient namespace scope\nr OK a.x:manual-20261127T000000Z\n');
      expect(h.requests.map((r) => r.instruction)).to.deep.equal(['AUTH', 'SCHEDULE LIST', 'SCHEDULE SET', 'SCHEDULE GET', 'SCHEDULE RUN']);
    });

    it('an invalid SCHEDULE SET is answered at once, naming the field', async () => {
      const h = harness(null);
      h.feed('e SCHEDULE SET a.x every=1m overlap=never\n');
      await settled();
      expect(h.pending).to.have.length(0);
      expect(h.written()).to.equal('e ERROR invalid_args overlap: must be allow, skip or queue\n');
      expect(h.requests.map((r) => [r.instruction, r.success])).to.deep.equal([['SCHEDULE SET', false]]);
    });
  });
});
