// The engine with a controllable journal: persistence before reply, in order; a failed flush
// rolls back every change not yet durable and fails exactly those commands; stale attempts.
import { expect } from 'chai';
import type { Command, Reply } from '../../../lib/domain/command.ts';
import { Engine } from '../../../lib/engine/engine.ts';
import type { Journal, LogRecord } from '../../../lib/engine/journal.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { RuleStore } from '../../../lib/store/rules.ts';
import type { StatValues } from '../../../lib/domain/stat.ts';
import type { Attempt } from '../../../lib/domain/attempt.ts';

class FakeJournal implements Journal {
  records: LogRecord[] = [];
  private waiting: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  append(rec: LogRecord): void { this.records.push(rec); }
  flush(): Promise<void> { return new Promise((resolve, reject) => this.waiting.push({ resolve, reject })); }
  async close(): Promise<void> {}
  succeed(): void { for (const w of this.waiting.splice(0)) w.resolve(); }
  fail(): void { for (const w of this.waiting.splice(0)) w.reject(new Error('EIO')); }
}

const tick = () => new Promise((r) => setImmediate(r));

function setup(journal: Journal | null) {
  const jobs = new JobStore();
  const rules = new RuleStore();
  const dispatched: Array<{ id: string; attempt: string }> = [];
  const engine = new Engine({
    jobs, rules, journal,
    dispatch: (job, _rule, attempt) => dispatched.push({ id: job.id, attempt }),
    stat: () => ({}) as StatValues,
    onPersistError: () => {},
  });
  const run = (cmds: Command[]) => {
    let replies: Reply[] | null = null;
    engine.submitBatch(cmds, (r) => { replies = r; });
    return () => replies;
  };
  return { engine, jobs, rules, dispatched, run };
}

describe('engine', () => {
  it('memory mode answers at once', () => {
    const { run } = setup(null);
    const replies = run([{ op: 'job.set', id: 'a', execution: 5n }, { op: 'job.get', id: 'a' }])();
    expect(replies).to.deep.equal([{ ok: true, kind: 'done' }, { ok: true, kind: 'job', job: { id: 'a', execution: 5n, status: 'planned' } }]);
  });

  it('holds replies until the journal says durable, and releases reads behind earlier writes', async () => {
    const journal = new FakeJournal();
    const { run } = setup(journal);
    const write = run([{ op: 'job.set', id: 'a', execution: 5n }]);
    const read = run([{ op: 'job.get', id: 'a' }]);
    expect(write()).to.equal(null);
    expect(read()).to.equal(null);
    expect(journal.records).to.deep.equal([{ t: 'job', job: { id: 'a', execution: 5n, status: 'planned' } }]);
    journal.succeed();
    await tick();
    expect(write()).to.deep.equal([{ ok: true, kind: 'done' }]);
    expect(read()![0]).to.deep.include({ ok: true, kind: 'job' });
  });

  it('a failed flush rolls back every non-durable change and answers internal', async () => {
    const journal = new FakeJournal();
    const { run, jobs, rules } = setup(journal);
    run([{ op: 'job.set', id: 'keep', execution: 1n }]);
    journal.succeed();
    await tick();
    const b1 = run([{ op: 'job.set', id: 'keep', execution: 2n }, { op: 'job.set', id: 'new', execution: 3n }]);
    const b2 = run([{ op: 'job.remove', id: 'keep' }, { op: 'rule.set', rule: { id: 'r', pattern: '', runner: { type: 'shell', command: 'true' } } }]);
    expect(jobs.get('keep')).to.equal(undefined);
    journal.fail();
    await tick();
    expect(b1()).to.deep.equal([{ ok: false, code: 'internal', message: '' }, { ok: false, code: 'internal', message: '' }]);
    expect(b2()!.every((r) => !r.ok)).to.equal(true);
    expect(jobs.get('keep')).to.deep.equal({ id: 'keep', execution: 1n, status: 'planned' });
    expect(jobs.get('new')).to.equal(undefined);
    expect(rules.get('r')).to.equal(undefined);
    // and the engine keeps working afterwards
    const b3 = run([{ op: 'job.set', id: 'after', execution: 4n }]);
    journal.succeed();
    await tick();
    expect(b3()).to.deep.equal([{ ok: true, kind: 'done' }]);
  });

  it('fires due jobs, fails jobs without a rule, and ignores results of stale attempts', () => {
    const { engine, run, jobs, dispatched } = setup(null);
    run([
      { op: 'rule.set', rule: { id: 'r', pattern: 'x.', runner: { type: 'shell', command: 'true' } } },
      { op: 'job.set', id: 'x.1', execution: 10n },
      { op: 'job.set', id: 'y.1', execution: 10n },
      { op: 'job.set', id: 'x.later', execution: 1000n },
    ]);
    engine.tick(100n);
    expect(jobs.get('x.1')!.status).to.equal('triggered');
    expect(jobs.get('y.1')!.status).to.equal('failed');
    expect(jobs.get('x.later')!.status).to.equal('planned');
    expect(dispatched.map((d) => d.id)).to.deep.equal(['x.1']);
    const first = dispatched[0]!.attempt;
    expect(first).to.match(/^[0-9a-f]{32}$/);
    run([{ op: 'job.set', id: 'x.1', execution: 200n }]); // re-arm while running
    engine.result('x.1', first, true);
    engine.tick(150n);
    expect(jobs.get('x.1')!.status).to.equal('planned');
    engine.tick(250n);
    const second = dispatched[1]!.attempt;
    expect(second).to.not.equal(first);
    engine.result('x.1', first, false);
    engine.result('x.1', second, true);
    engine.tick(260n);
    expect(jobs.get('x.1')!.status).to.equal('executed');
  });

  it('a held firing fires nothing more, while ticks and the settle go on recording results durably', async () => {
    const journal = new FakeJournal();
    const { engine, run, jobs, dispatched } = setup(journal);
    run([
      { op: 'rule.set', rule: { id: 'r', pattern: 'x.', runner: { type: 'shell', command: 'true' } } },
      { op: 'job.set', id: 'x.1', execution: 10n },
      { op: 'job.set', id: 'x.2', execution: 10n },
      { op: 'job.set', id: 'x.3', execution: 50n },
    ]);
    engine.tick(20n);
    journal.succeed();
    await tick();
    expect(dispatched.map((d) => d.id)).to.deep.equal(['x.1', 'x.2']);
    engine.holdFiring();
    engine.result('x.1', dispatched[0]!.attempt, true);
    expect(engine.tick(100n)).to.equal(false);
    expect(jobs.get('x.1')!.status).to.equal('executed');
    expect(jobs.get('x.3')!.status, 'due during the stop: left for the next start').to.equal('planned');
    expect(dispatched).to.have.length(2);
    journal.succeed();
    await tick();
    // A result after the last tick: the settle applies it, and resolves once it is durable.
    engine.result('x.2', dispatched[1]!.attempt, false);
    let settled = false;
    const settling = engine.settle().then(() => { settled = true; });
    expect(jobs.get('x.2')!.status).to.equal('failed');
    expect(journal.records.at(-1)).to.deep.equal({ t: 'job', job: { id: 'x.2', execution: 10n, status: 'failed' } });
    await tick();
    expect(settled, 'before the journal said durable').to.equal(false);
    journal.succeed();
    await settling;
    // Nothing to apply: resolves at once.
    await engine.settle();
  });

  it('re-dispatches only jobs left triggered by an earlier process, whenever it runs', () => {
    const { engine, run, jobs, dispatched } = setup(null);
    jobs.put({ id: 'x.left', execution: 5n, status: 'triggered' }); // as replayed from disk
    run([
      { op: 'rule.set', rule: { id: 'r', pattern: 'x.', runner: { type: 'shell', command: 'true' } } },
      { op: 'job.set', id: 'x.due', execution: 10n },
    ]);
    engine.tick(100n); // fires x.due: now triggered under this process's attempt
    expect(engine.redispatchTriggered()).to.equal(1);
    expect(dispatched.map((d) => d.id)).to.deep.equal(['x.due', 'x.left']);
    expect(engine.redispatchTriggered()).to.equal(0); // x.left now has an attempt too
    engine.result('x.left', dispatched[1]!.attempt, true);
    engine.tick(101n);
    expect(jobs.get('x.left')!.status).to.equal('executed');
  });

  it('cluster mode, taking over: adopts an attempt a node still runs, so its result counts and the job is not dispatched again', () => {
    const { engine, run, jobs, dispatched } = setup(null);
    jobs.put({ id: 'x.held', execution: 5n, status: 'triggered' }); // as the stream shows it
    jobs.put({ id: 'x.retried', execution: 5n, status: 'triggered', attempt: 3 });
    jobs.put({ id: 'x.gone', execution: 5n, status: 'triggered' });
    run([{ op: 'rule.set', rule: { id: 'r', pattern: 'x.', runner: { type: 'shell', command: 'true' } } }]);
    const a = 'a'.repeat(32);
    expect(engine.adopt('x.held', a, 5n, 1)).to.equal(true);
    expect(engine.adopt('x.held', 'b'.repeat(32), 5n, 1), 'adopted once').to.equal(false);
    expect(engine.adopt('x.retried', 'c'.repeat(32), 5n, 2), 'another attempt number').to.equal(false);
    expect(engine.adopt('x.gone', 'd'.repeat(32), 6n, 1), 'another execution time').to.equal(false);
    expect(engine.redispatchTriggered()).to.equal(2);
    expect(dispatched.map((d) => d.id).sort()).to.deep.equal(['x.gone', 'x.retried']);
    engine.result('x.held', a, true);
    engine.tick(100n);
    expect(jobs.get('x.held')!.status).to.equal('executed');
  });

  it('tells a result\'s durable callback once what it changed is durable (a stale one too), never when the flush fails', async () => {
    const journal = new FakeJournal();
    const { engine, run, dispatched } = setup(journal);
    run([
      { op: 'rule.set', rule: { id: 'r', pattern: 'x.', runner: { type: 'shell', command: 'true' } } },
      { op: 'job.set', id: 'x.1', execution: 10n },
      { op: 'job.set', id: 'x.2', execution: 10n },
    ]);
    engine.tick(100n);
    journal.succeed();
    await tick();
    const told: string[] = [];
    engine.result('x.1', dispatched[0]!.attempt, true, undefined, () => told.push('x.1'));
    engine.result('x.1', 'f'.repeat(32), true, undefined, () => told.push('stale'));
    engine.tick(110n);
    expect(told, 'before the flush').to.deep.equal([]);
    journal.succeed();
    await tick();
    expect(told).to.deep.equal(['x.1', 'stale']);
    engine.result('x.2', dispatched[1]!.attempt, true, undefined, () => told.push('x.2'));
    engine.tick(120n);
    journal.fail();
    await tick();
    expect(told, 'a failed flush tells nothing: the node sends it again').to.deep.equal(['x.1', 'stale']);
  });

  it('cluster mode, a node lost: the job runs again under a new attempt, and the lost one\'s late result is stale', () => {
    const { engine, run, jobs, dispatched } = setup(null);
    run([
      { op: 'rule.set', rule: { id: 'r', pattern: 'x.', runner: { type: 'shell', command: 'true' } } },
      { op: 'job.set', id: 'x.1', execution: 10n },
    ]);
    engine.tick(100n);
    const first = dispatched[0]!.attempt;
    expect(engine.rerun('x.1', 'f'.repeat(32)), 'not its current attempt').to.equal(false);
    expect(engine.rerun('x.1', first)).to.equal(true);
    expect(dispatched).to.have.length(2);
    const second = dispatched[1]!.attempt;
    expect(second).to.not.equal(first);
    expect(jobs.get('x.1')!.status).to.equal('triggered');
    engine.result('x.1', first, false); // the lost node came back with a result: ignored
    engine.tick(110n);
    expect(jobs.get('x.1')!.status).to.equal('triggered');
    engine.result('x.1', second, true);
    engine.tick(120n);
    expect(jobs.get('x.1')!.status).to.equal('executed');
    expect(engine.rerun('x.1', second), 'over').to.equal(false);
  });

  it('keeps the last attempt of each job: GET answers it, stale results and TCP-less replies aside', () => {
    const { engine, run, dispatched } = setup(null);
    run([
      { op: 'rule.set', rule: { id: 'r', pattern: 'x.', runner: { type: 'shell', command: 'exit 3' } } },
      { op: 'job.set', id: 'x.1', execution: 10n },
      { op: 'job.set', id: 'y.1', execution: 40n },
    ]);
    const get = (id: string) => run([{ op: 'job.get', id }])()![0]!;
    engine.tick(100n);
    // No rule: recorded at the firing, 60 ns late, nothing ran.
    expect(get('y.1')).to.deep.equal({
      ok: true, kind: 'job', job: { id: 'y.1', execution: 40n, status: 'failed' },
      attempt: { rule: null, runner: null, startedNs: 100n, latenessNs: 60n, durationNs: 0n, outcome: { kind: 'no_rule' } },
    });
    expect(get('x.1')).to.not.have.property('attempt'); // running: nothing recorded yet
    const record: Attempt = { rule: 'r', runner: 'shell', startedNs: 101n, latenessNs: 91n, durationNs: 7n, outcome: { kind: 'exit', status: 3, stderr: 'no\n' } };
    engine.result('x.1', dispatched[0]!.attempt, false, record);
    engine.tick(110n);
    expect(get('x.1')).to.deep.equal({ ok: true, kind: 'job', job: { id: 'x.1', execution: 10n, status: 'failed' }, attempt: record });
    // A stale attempt's result changes neither the status nor the record.
    run([{ op: 'job.set', id: 'x.1', execution: 500n }]);
    engine.result('x.1', dispatched[0]!.attempt, true, { ...record, outcome: { kind: 'exit', status: 0, stderr: '' } });
    engine.tick(120n);
    expect(get('x.1')).to.deep.include({ attempt: record });
    // REMOVE forgets it; so does stepping down (cluster mode).
    run([{ op: 'job.remove', id: 'x.1' }]);
    run([{ op: 'job.set', id: 'x.1', execution: 900n }]);
    expect(get('x.1')).to.not.have.property('attempt');
    expect(engine.attempts.size).to.equal(1);
    engine.forget();
    expect(get('y.1')).to.not.have.property('attempt');
  });

  it('answers activity from its source', () => {
    const view = { intervalMs: 1000, buckets: [{ atMs: 1000, fired: 1, executed: 1, failed: 0, latenessP50Ms: 0.5, latenessMaxMs: 0.5 }] };
    const engine = new Engine({
      jobs: new JobStore(), rules: new RuleStore(), journal: null, dispatch: () => {}, stat: () => ({}) as StatValues, onPersistError: () => {}, activity: () => view,
    });
    expect(engine.execute({ op: 'activity' })).to.deep.equal({ ok: true, kind: 'activity', activity: view });
    expect(engine.execute({ op: 'metrics' })).to.deep.include({ ok: false, code: 'not_found' });
  });

  it('a command that throws fails alone', () => {
    const { run } = setup(null);
    const replies = run([{ op: 'job.set', id: 'ok', execution: 1n }, { op: 'job.set', id: 'bad', execution: 1n << 70n }, { op: 'job.get', id: 'ok' }])();
    expect(replies![0]).to.deep.equal({ ok: true, kind: 'done' });
    expect(replies![1]).to.deep.equal({ ok: false, code: 'internal', message: '' });
    expect(replies![2]).to.deep.include({ ok: true, kind: 'job' });
  });
});
