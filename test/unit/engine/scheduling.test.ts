// Schedules in the engine (lib/engine/scheduling.ts), on a simulated clock ahead of the real
// one: each nominal time decided once, whatever the ticks, the gaps and the restarts; the
// log holds every decision before it acts (a replay of what was journaled decides nothing
// again); missed and overlap policies, limit, pause/resume, run now, retention, removal.
import { expect } from 'chai';
import { Engine } from '../../../lib/engine/engine.ts';
import { applyRecord, type Journal, type LogRecord } from '../../../lib/engine/journal.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { RuleStore } from '../../../lib/store/rules.ts';
import { ScheduleStore } from '../../../lib/store/schedules.ts';
import { readSchedule } from '../../../lib/schedule/spec.ts';
import { occurrenceId } from '../../../lib/schedule/occurrence.ts';
import { wallNowNs } from '../../../lib/clock.ts';
import { encodeRecord } from '../../../lib/logfile/codec.ts';
import type { Reply } from '../../../lib/domain/command.ts';
import type { ScheduleState } from '../../../lib/domain/schedule.ts';

const S = 1_000_000_000n;

class RecordingJournal implements Journal {
  readonly records: LogRecord[] = [];
  append(rec: LogRecord): void { this.records.push(rec); }
  flush(): Promise<void> { return Promise.resolve(); }
  close(): Promise<void> { return Promise.resolve(); }
}

interface Daemon {
  engine: Engine;
  jobs: JobStore;
  schedules: ScheduleStore;
  journal: RecordingJournal;
  /** Job ids dispatched; `finish` decides whether each ends at once (true) or keeps running. */
  dispatched: string[];
}

/** An engine over stores replayed from `records` (a restart), finishing executions when `finish` says so. */
function start(records: readonly LogRecord[] = [], finish = (_id: string, _attempt: string) => true): Daemon {
  const jobs = new JobStore();
  const rules = new RuleStore();
  const schedules = new ScheduleStore();
  for (const rec of records) applyRecord(jobs, rules, rec, schedules);
  rules.put({ id: 'all', pattern: '', runner: { type: 'shell', command: 'true' } });
  const journal = new RecordingJournal();
  journal.records.push(...records);
  const dispatched: string[] = [];
  const engine: Engine = new Engine({
    jobs, rules, schedules, journal,
    dispatch: (job, _rule, attempt) => {
      dispatched.push(job.id);
      if (finish(job.id, attempt)) engine.result(job.id, attempt, true);
    },
    stat: () => { throw new Error('no stat here'); },
    onPersistError: (err) => { throw err; },
    onCommandError: (err) => { throw err; },
  });
  return { engine, jobs, schedules, journal, dispatched };
}

function set(d: Daemon, id: string, fields: Record<string, unknown>): ScheduleState {
  const r = readSchedule(id, fields);
  if (!('schedule' in r)) throw new Error(`${r.field}: ${r.error}`);
  const reply = d.engine.execute({ op: 'schedule.set', schedule: r.schedule });
  return expectSchedule(reply);
}

function expectSchedule(reply: Reply): ScheduleState {
  if (!reply.ok || reply.kind !== 'schedule') throw new Error(`not a schedule: ${JSON.stringify(reply, (_k, v) => (typeof v === 'bigint' ? `${v}` : v))}`);
  return reply.schedule.state;
}

/** Ticks every 10 ms of simulated time from `from` to `to`. */
function run(d: Daemon, from: bigint, to: bigint): void {
  for (let t = from; t <= to; t += 10_000_000n) d.engine.tick(t);
}

/** The nominal times, in seconds after `base`, of the occurrences dispatched. */
function fired(d: Daemon, id: string, base: bigint): number[] {
  return d.dispatched.filter((j) => j.startsWith(`${id}:`)).map((j) => {
    const st = d.schedules.get(id)!;
    const nominal = [...st.fires].find((n) => occurrenceId(id, n) === j);
    return nominal === undefined ? NaN : Number((nominal - base) / S);
  });
}

describe('schedules in the engine', () => {
  // The first whole second after now: the schedule is made now (real clock), so t0 is its first nominal time.
  let t0: bigint;
  beforeEach(() => {
    t0 = (wallNowNs() / S + 1n) * S;
  });

  it('fires each nominal time once, in order, decided ahead of it', () => {
    const d = start();
    set(d, 'a', { every: '1s' });
    run(d, t0 - S, t0 + 5n * S + 600_000_000n);
    const ids = d.dispatched;
    expect(ids).to.deep.equal([0, 1, 2, 3, 4, 5].map((k) => occurrenceId('a', t0 + BigInt(k) * S)));
    // the job of t0 + 6 s exists before its nominal time: decided ahead (overlap allow)
    expect(d.schedules.get('a')!.decided).to.equal(t0 + 6n * S);
    expect(d.jobs.get(occurrenceId('a', t0 + 6n * S))?.status).to.equal('planned');
  });

  it('a restart from the journal decides nothing again; what fell in the gap follows `missed`', () => {
    // Down from `decided` + 0.5 s to + 5.5 s: + 1 .. + 4 s are missed (over 1 s late), + 5 s is on time.
    // `once` runs the latest missed one only when none is on time: here every policy runs + 5 s alone, or with all.
    for (const [missed, expectFires, expectSkipped] of [['skip', 0, 4], ['once', 0, 4], ['all', 4, 0]] as const) {
      const d = start();
      set(d, 'a', { every: '1s', missed });
      run(d, t0, t0 + 3n * S);
      const before = new Set(d.dispatched);
      const decided = d.schedules.get('a')!.decided;
      const again = start(d.journal.records);
      run(again, decided + 5n * S + S / 2n, decided + 5n * S + S / 2n + 50_000_000n);
      const gap = [1n, 2n, 3n, 4n].map((k) => occurrenceId('a', decided + k * S));
      expect(again.dispatched, missed).to.include(occurrenceId('a', decided + 5n * S));
      const firedInGap = again.dispatched.filter((j) => gap.includes(j));
      expect(firedInGap, missed).to.have.length(expectFires);
      for (const j of again.dispatched) expect(before.has(j) && j !== occurrenceId('a', decided), `${missed}: ${j} twice`).to.equal(false);
      expect(again.schedules.get('a')!.skippedMissed, missed).to.equal(expectSkipped);
    }
  });

  it('overlap skip and queue: a running occurrence holds the next back', () => {
    for (const overlap of ['skip', 'queue'] as const) {
      const running = new Set<string>();
      const d = start([], (id) => { running.add(id); return false; }); // nothing ends by itself
      set(d, 'o', { every: '1s', overlap });
      run(d, t0, t0 + 4n * S + S / 2n);
      expect(d.dispatched, overlap).to.have.length(1);
      const st = d.schedules.get('o')!;
      expect(st.skippedOverlap, overlap).to.equal(overlap === 'skip' ? 4 : 3);
      if (overlap === 'queue') expect(st.held, overlap).to.not.equal(null);
    }
  });

  it('limit counts fired occurrences; paused decides nothing and resume follows `missed`, without a burst', () => {
    const d = start();
    set(d, 'l', { every: '1s', limit: 2 });
    run(d, t0, t0 + 5n * S);
    expect(d.dispatched).to.have.length(2);
    expect(d.schedules.armedAt('l')).to.equal(null);

    const p = start();
    set(p, 'p', { every: '1s', paused: true });
    run(p, t0, t0 + 3n * S);
    expect(p.dispatched).to.have.length(0);
    expectSchedule(p.engine.execute({ op: 'schedule.pause', id: 'p', paused: false }));
    run(p, t0 + 3n * S, t0 + 3n * S + S / 2n);
    expect(p.dispatched.length).to.be.at.most(2); // `once`: the latest missed one, and perhaps the next on time
  });

  it('run now makes a manual occurrence; retention keeps `keep` of each outcome; remove takes back planned ones', () => {
    const d = start();
    set(d, 'k', { every: '1s', keep: 2 });
    run(d, t0, t0 + 6n * S + 600_000_000n);
    const executed = d.dispatched.filter((j) => d.jobs.get(j)?.status === 'executed');
    expect(executed.length).to.be.at.most(3); // pruned at each decision: keep, plus the one that ended since
    const ran = d.engine.execute({ op: 'schedule.run', id: 'k' });
    expect(ran.ok && ran.kind === 'schedule' && ran.job?.startsWith('k:manual-')).to.equal(true);
    const planned = [...d.schedules.get('k')!.fires].filter((n) => d.jobs.get(occurrenceId('k', n))?.status === 'planned');
    expect(planned.length).to.be.greaterThan(0);
    expect(d.engine.execute({ op: 'schedule.remove', id: 'k' })).to.deep.equal({ ok: true, kind: 'done' });
    for (const n of planned) expect(d.jobs.get(occurrenceId('k', n))).to.equal(undefined);
    expect(d.engine.execute({ op: 'schedule.get', id: 'k' })).to.include({ ok: false, code: 'not_found' });
  });

  it('retention forgets an occurrence whose job is gone, keeps the rest in nominal order, and removes those beyond `keep`', () => {
    const d = start();
    set(d, 'r', { every: '1s', keep: 3 });
    run(d, t0, t0 + 5n * S + 600_000_000n);
    const before = [...d.schedules.get('r')!.fires];
    expect(before.length).to.be.greaterThan(3);
    const gone = before[before.length - 3]!; // an ended one among the newest: removed by a client, say
    expect(d.jobs.statusOf(occurrenceId('r', gone))).to.equal('executed');
    d.jobs.delete(occurrenceId('r', gone));
    run(d, t0 + 5n * S + 610_000_000n, t0 + 9n * S + 600_000_000n);
    const after = d.schedules.get('r')!.fires;
    expect(after).to.not.include(gone);
    for (let i = 1; i < after.length; i++) expect(after[i]! > after[i - 1]!).to.equal(true);
    for (const n of after) expect(d.jobs.statusOf(occurrenceId('r', n))).to.not.equal(undefined);
    const ended = after.filter((n) => d.jobs.statusOf(occurrenceId('r', n)) === 'executed');
    expect(ended.length).to.be.within(3, 4); // keep, plus one that ended since the last decision
    // Every occurrence job left in the store is one the schedule still lists.
    const listed = new Set(after.map((n) => occurrenceId('r', n)));
    const stored = d.dispatched.filter((j) => j.startsWith('r:') && d.jobs.statusOf(j) !== undefined);
    for (const j of stored) expect(listed.has(j), j).to.equal(true);
  });

  it('the log has each occurrence job before the schedule state that decides it', () => {
    const d = start();
    set(d, 'w', { every: '1s' });
    run(d, t0, t0 + 2n * S);
    const recs = d.journal.records;
    for (let i = 0; i < recs.length; i++) {
      const r = recs[i]!;
      if (r.t !== 'schedule') continue;
      for (const n of r.state.fires) {
        const jobAt = recs.findIndex((x) => x.t === 'job' && x.job.id === occurrenceId('w', n));
        expect(jobAt, `job of ${n}`).to.be.within(0, i - 1);
      }
    }
  });
});

describe('schedules in the engine: a tick that runs out of time', () => {
  it('decides every due schedule over the next ticks, none left unarmed (a slice that ran over its time lost them)', () => {
    const d = start();
    const t0 = (wallNowNs() / S + 1n) * S;
    // 2 000 cron schedules in a zone, all due at once: far more than one tick's 2 ms decides.
    for (let i = 0; i < 2000; i++) set(d, `many.${i}`, { cron: '* * * * * *', tz: 'Europe/Berlin', overlap: 'skip' });
    let ticks = 0;
    for (let t = t0; ticks < 10_000 && [...d.schedules.all()].some((s) => s.fired === 0); t += 1_000_000n, ticks++) d.engine.tick(t);
    const behind = [...d.schedules.all()].filter((s) => s.fired === 0).map((s) => s.schedule.id);
    expect(behind, 'schedules never decided').to.deep.equal([]);
    for (const s of d.schedules.all()) expect(d.schedules.armedAt(s.schedule.id), s.schedule.id).to.not.equal(null);
  });
});

describe('schedules in the engine: a bound on how many', () => {
  it('refuses a new schedule past MAX_SCHEDULES, naming the bound; replacing one still works', async () => {
    const { MAX_SCHEDULES } = await import('../../../lib/engine/commands/schedule-set.ts');
    const d = start();
    set(d, 'kept', { every: '1h' });
    // The store at the bound, without making four million schedules: its size is what is checked.
    Object.defineProperty(d.schedules, 'size', { get: () => MAX_SCHEDULES });
    const r = readSchedule('one.more', { every: '1h' });
    if (!('schedule' in r)) throw new Error('refused');
    const reply = d.engine.execute({ op: 'schedule.set', schedule: r.schedule });
    expect(reply).to.deep.include({ ok: false, code: 'invalid_args' });
    expect(!reply.ok && reply.message).to.match(/the most it takes \(4194304\); remove one first$/);
    expect(d.schedules.get('one.more')).to.equal(undefined);
    expect(set(d, 'kept', { every: '2h' }).schedule.every).to.equal(7200n * S);
  });
});

describe('schedules in the engine: a kill -9 in the middle of a decision\'s write', () => {
  it('a log that ends between an occurrence\'s job and the schedule\'s state decides that occurrence again into the same job, once', () => {
    const d = start();
    const t0 = (wallNowNs() / S + 1n) * S;
    set(d, 't', { every: '1s' });
    run(d, t0, t0 + 2n * S);
    const recs = d.journal.records;
    // The last decision wrote a job, then the state: cut the log just before that state.
    const lastState = recs.map((r) => r.t).lastIndexOf('schedule');
    expect(recs[lastState - 1]!.t).to.equal('job');
    const torn = recs.slice(0, lastState);
    const lastJob = recs[lastState - 1]!;
    if (lastJob.t !== 'job') throw new Error('not a job');
    const again = start(torn);
    run(again, t0 + 2n * S + 100_000_000n, t0 + 4n * S);
    const jobs = [...again.schedules.get('t')!.fires].map((n) => occurrenceId('t', n));
    expect(new Set(jobs).size, 'an occurrence twice').to.equal(jobs.length);
    expect(jobs).to.include(lastJob.job.id);
    expect(again.dispatched.filter((j) => j === lastJob.job.id).length).to.be.at.most(1);
  });
});

describe('schedules in the engine: what a client cannot make it do', () => {
  it('a replacement whose calendar cannot answer changes nothing: the planned occurrence stays', () => {
    const d = start();
    const t0 = (wallNowNs() / S + 1n) * S;
    set(d, 'a', { every: '1s' });
    run(d, t0 - S, t0 + 5n * S + 600_000_000n); // as above: t0 + 6 s decided ahead, planned
    const planned = [...d.schedules.get('a')!.fires].filter((n) => d.jobs.statusOf(occurrenceId('a', n)) === 'planned');
    expect(planned).to.deep.equal([t0 + 6n * S]);
    // A zone the runtime does not know gets past nothing a client sends (readSchedule refuses
    // it): here it stands for any calendar that throws.
    const bad = { ...d.schedules.get('a')!.schedule, cron: '* * * * *', every: null, tz: 'Mars/Olympus' };
    expect(() => d.engine.execute({ op: 'schedule.set', schedule: bad })).to.throw(/Mars\/Olympus/);
    expect(d.jobs.statusOf(occurrenceId('a', planned[0]!))).to.equal('planned');
    expect(d.schedules.get('a')!.schedule.every).to.equal(S);
  });

  it('run now keeps `keep` of its runs on a schedule that is never decided, and refuses more than MAX_MANUAL_WAITING unfinished', async () => {
    const { MAX_MANUAL_WAITING } = await import('../../../lib/engine/scheduling.ts');
    const d = start();
    set(d, 'm', { every: '1m', paused: true, keep: 2 });
    for (let i = 0; i < 10; i++) {
      expectSchedule(d.engine.execute({ op: 'schedule.run', id: 'm' }));
      d.engine.tick(wallNowNs() + S);
    }
    expect(d.dispatched).to.have.length(10);
    // keep 2 executed, and those not yet ended when the last RUN pruned (a result lands a turn later)
    const left = d.dispatched.filter((j) => d.jobs.statusOf(j) !== undefined);
    expect(left.length).to.be.within(3, 4);
    expect(d.schedules.get('m')!.manual).to.have.length(left.length);

    const w = start([], () => false);
    set(w, 'w', { every: '1m', paused: true });
    for (let i = 0; i < MAX_MANUAL_WAITING; i++) expectSchedule(w.engine.execute({ op: 'schedule.run', id: 'w' }));
    const refused = w.engine.execute({ op: 'schedule.run', id: 'w' });
    expect(refused).to.deep.include({ ok: false, code: 'invalid_args' });
    expect(!refused.ok && refused.message).to.match(/^run: 1000 manual runs of schedule w have not ended yet/);
    expect(w.schedules.get('w')!.manual).to.have.length(MAX_MANUAL_WAITING);
  });

  it('overlap allow holds at most MAX_UNFINISHED occurrences waiting or running: a day of seconds caught up behind a runner that never ends', async () => {
    const { MAX_UNFINISHED } = await import('../../../lib/schedule/decide.ts');
    const d = start([], () => false);
    const t0 = (wallNowNs() / S + 1n) * S;
    set(d, 'b', { every: '1s', missed: 'all', catchup: '1d', paused: true });
    expectSchedule(d.engine.execute({ op: 'schedule.pause', id: 'b', paused: false }));
    // Twenty hours later: 72 000 missed seconds within the catch-up window, MAX_FIRES a decision.
    const later = t0 + 20n * 3600n * S;
    for (let i = 0; i < 100; i++) d.engine.tick(later + BigInt(i) * 1_000_000n);
    for (let k = 1n; k <= 5n; k++) d.engine.tick(later + k * S);
    const st = d.schedules.get('b')!;
    const unfinished = st.fires.filter((n) => d.jobs.statusOf(occurrenceId('b', n)) !== undefined);
    expect(unfinished).to.have.length(MAX_UNFINISHED);
    expect(st.fires).to.have.length(MAX_UNFINISHED);
    // The rest of the catch-up waits for room (the next test): nothing skipped, not decided yet.
    expect(st.skippedOverlap).to.equal(0);
    expect(st.decided < later, 'the rest undecided').to.equal(true);
    // The state still fits a record (it did not: 72 000 nominal times, past the codec's 65 535).
    const last = d.journal.records.filter((r) => r.t === 'schedule').at(-1)!;
    expect(() => encodeRecord(last)).to.not.throw();
  });

  it('missed=all beyond MAX_UNFINISHED waits for room instead of skipping: every missed occurrence in the window still runs, in order, once', async () => {
    const { MAX_UNFINISHED } = await import('../../../lib/schedule/decide.ts');
    const running: [string, string][] = [];
    const d = start([], (id, attempt) => { running.push([id, attempt]); return false; }); // ends when the test says
    const t0 = (wallNowNs() / S + 1n) * S;
    set(d, 'c', { every: '1s', missed: 'all', catchup: '1d', paused: true });
    expectSchedule(d.engine.execute({ op: 'schedule.pause', id: 'c', paused: false }));
    // Down an hour: 3 600 missed, more than MAX_UNFINISHED waiting at once.
    let now = t0 + 3600n * S;
    const upTo = now;
    for (let i = 0; i < 20; i++) d.engine.tick(now += 1_000_000n);
    expect(d.dispatched).to.have.length(MAX_UNFINISHED);
    expect(d.schedules.get('c')!.skippedOverlap).to.equal(0);
    // Each second, what runs ends: the next ones come in, MAX_UNFINISHED at most at a time.
    for (let k = 0; k < 8; k++) {
      for (const [id, attempt] of running.splice(0)) d.engine.result(id, attempt, true);
      for (let i = 0; i < 3; i++) d.engine.tick(now += 400_000_000n);
    }
    const nominals = new Set(Array.from({ length: 3600 }, (_, k) => occurrenceId('c', t0 + BigInt(k) * S)));
    const fired = d.dispatched.filter((j) => nominals.has(j));
    expect(fired).to.have.length(3600); // every one of the missed hour
    expect(new Set(d.dispatched).size).to.equal(d.dispatched.length); // none twice
    expect(fired).to.deep.equal([...nominals]); // in nominal order
    expect(d.schedules.get('c')!.skippedOverlap).to.equal(0);
    expect(d.schedules.get('c')!.decided >= upTo, 'caught up').to.equal(true);
  });

  it('a tick decides one schedule more only while within its budget: a long skipped range of a dense cron does not hold the others', () => {
    const d = start();
    const t0 = (wallNowNs() / S + 1n) * S;
    for (const id of ['c1', 'c2', 'c3']) set(d, id, { cron: '* * * * * *', missed: 'skip', paused: true });
    for (const id of ['c1', 'c2', 'c3']) expectSchedule(d.engine.execute({ op: 'schedule.pause', id, paused: false }));
    const decided = (): number => ['c1', 'c2', 'c3'].filter((id) => d.schedules.get(id)!.decided > t0 + 3600n * S).length;
    // Three hours later (wall time for the engine): each has 10 800 missed seconds to count.
    d.engine.tick(t0 + 3n * 3600n * S);
    expect(decided()).to.equal(1);
    for (let i = 0; i < 4 && decided() < 3; i++) d.engine.tick(t0 + 3n * 3600n * S + BigInt(i + 1) * 1_000_000n);
    expect(decided()).to.equal(3);
    const skip = d.schedules.get('c1')!.skips.at(-1)!;
    expect(skip.reason).to.equal('missed');
    expect(skip.count).to.equal(1000); // COUNT_CAP: from and to say the whole range
  });
});
