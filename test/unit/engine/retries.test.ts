// Retries and limits in the engine (issue 38), with a fake clock and a memory journal that
// records what would be written: the attempt's number and next time persisted before the wait,
// a retry only for an outcome worth one and while attempts are left, SET and REMOVE ending the
// attempts, concurrency and rate limits holding jobs in due order and releasing them.
import { expect } from 'chai';
import type { Attempt, AttemptOutcome } from '../../../lib/domain/attempt.ts';
import type { Command } from '../../../lib/domain/command.ts';
import type { Rule } from '../../../lib/domain/rule.ts';
import type { RuleOptions } from '../../../lib/domain/rule-options.ts';
import type { StatValues } from '../../../lib/domain/stat.ts';
import { Engine } from '../../../lib/engine/engine.ts';
import type { Journal, LogRecord } from '../../../lib/engine/journal.ts';
import type { RunInfo } from '../../../lib/engine/starts.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { RuleStore } from '../../../lib/store/rules.ts';

const S = 1_000_000_000n;

class MemJournal implements Journal {
  records: LogRecord[] = [];
  append(rec: LogRecord): void { this.records.push(rec); }
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}

interface Run { id: string; attempt: string; run: RunInfo; rule: string }

function setup(options: RuleOptions | undefined, jobs = new JobStore()) {
  const rules = new RuleStore();
  const journal = new MemJournal();
  const runs: Run[] = [];
  let mono = 0n;
  const engine = new Engine({
    jobs, rules, journal,
    dispatch: (job, rule, attempt, run) => runs.push({ id: job.id, attempt, run, rule: rule.id }),
    stat: () => ({}) as StatValues,
    onPersistError: () => {},
    mono: () => mono,
    random: () => 0.5,
  });
  const exec = (cmd: Command) => engine.execute(cmd);
  const rule: Rule = { id: 'r', pattern: 'j.', runner: { type: 'http', method: 'POST', url: 'http://127.0.0.1:9/' }, ...(options === undefined ? {} : { options }) };
  exec({ op: 'rule.set', rule });
  const report = (r: Run, outcome: AttemptOutcome, endNs: bigint, success = false) => {
    const record: Attempt = { rule: r.rule, runner: 'http', startedNs: endNs, latenessNs: 0n, durationNs: 0n, outcome, number: r.run.attemptNo, heldNs: r.run.heldNs };
    engine.result(r.id, r.attempt, success, record);
  };
  return { engine, jobs, rules, journal, runs, exec, report, setMono: (ns: bigint) => { mono = ns; } };
}

const retry = { attempts: 3, backoff: 'exponential' as const, delay: 1n * S, factor: 2, maxDelay: 3600n * S, jitter: 0 };
const E500: AttemptOutcome = { kind: 'http_response', status: 500 };

describe('engine: retries', () => {
  it('500, 500, 200 with exponential backoff from 1 s: attempts at T, T+1 s, T+3 s, then executed; each wait persisted first', () => {
    const { engine, jobs, journal, runs, exec, report } = setup({ retry });
    exec({ op: 'job.set', id: 'j.1', execution: 100n * S });
    engine.tick(100n * S);
    expect(runs.map((r) => r.run.attemptNo)).to.deep.equal([1]);
    report(runs[0]!, E500, 100n * S);
    engine.tick(100n * S + 1n);
    expect(jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 100n * S, status: 'triggered', attempt: 1, retryAt: 101n * S });
    expect(journal.records.at(-1)).to.deep.equal({ t: 'job', job: { id: 'j.1', execution: 100n * S, status: 'triggered', attempt: 1, retryAt: 101n * S } });
    engine.tick(101n * S - 1n);
    expect(runs).to.have.length(1);
    engine.tick(101n * S);
    expect(runs.map((r) => r.run)).to.deep.equal([{ attemptNo: 1, dueNs: 100n * S, heldNs: 0n }, { attemptNo: 2, dueNs: 101n * S, heldNs: 0n }]);
    expect(jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 100n * S, status: 'triggered', attempt: 2 });
    report(runs[1]!, E500, 101n * S);
    engine.tick(101n * S + 1n);
    expect(jobs.get('j.1')!.retryAt).to.equal(103n * S);
    engine.tick(103n * S);
    expect(runs.map((r) => r.run.attemptNo)).to.deep.equal([1, 2, 3]);
    report(runs[2]!, { kind: 'http_response', status: 200 }, 103n * S, true);
    engine.tick(103n * S + 1n);
    expect(jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 100n * S, status: 'executed', attempt: 3 });
  });

  it('the last attempt failing ends the job failed, keeping its number', () => {
    const { engine, jobs, runs, exec, report } = setup({ retry: { ...retry, attempts: 2 } });
    exec({ op: 'job.set', id: 'j.1', execution: 1n * S });
    engine.tick(1n * S);
    report(runs[0]!, E500, 1n * S);
    engine.tick(1n * S + 1n);
    engine.tick(2n * S);
    report(runs[1]!, E500, 2n * S);
    engine.tick(2n * S + 1n);
    expect(jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 1n * S, status: 'failed', attempt: 2 });
    engine.tick(100n * S);
    expect(runs).to.have.length(2);
  });

  it('an outcome not worth retrying (a 404) fails at once; a rule without a policy never retries', () => {
    const a = setup({ retry });
    a.exec({ op: 'job.set', id: 'j.1', execution: 1n * S });
    a.engine.tick(1n * S);
    a.report(a.runs[0]!, { kind: 'http_response', status: 404 }, 1n * S);
    a.engine.tick(1n * S + 1n);
    expect(a.jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 1n * S, status: 'failed' });
    const b = setup(undefined);
    b.exec({ op: 'job.set', id: 'j.1', execution: 1n * S });
    b.engine.tick(1n * S);
    b.report(b.runs[0]!, E500, 1n * S);
    b.engine.tick(1n * S + 1n);
    expect(b.jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 1n * S, status: 'failed' });
    expect(b.journal.records.every((r) => r.t !== 'job' || r.job.attempt === undefined)).to.equal(true);
  });

  it('a Retry-After longer than the backoff is honoured, capped by max_delay', () => {
    const { engine, jobs, runs, exec, report } = setup({ retry: { ...retry, maxDelay: 5n * S } });
    exec({ op: 'job.set', id: 'j.1', execution: 1n * S });
    engine.tick(1n * S);
    report(runs[0]!, { kind: 'http_response', status: 503, retryAfterMs: 2000 } as AttemptOutcome, 1n * S);
    engine.tick(1n * S + 1n);
    expect(jobs.get('j.1')!.retryAt).to.equal(3n * S);
    engine.tick(3n * S);
    report(runs[1]!, { kind: 'http_response', status: 429, retryAfterMs: 60_000 } as AttemptOutcome, 3n * S);
    engine.tick(3n * S + 1n);
    expect(jobs.get('j.1')!.retryAt).to.equal(8n * S);
  });

  it('SET while waiting starts afresh at attempt 1; REMOVE ends the attempts; a stale retry never runs', () => {
    const { engine, jobs, runs, exec, report } = setup({ retry });
    exec({ op: 'job.set', id: 'j.1', execution: 1n * S });
    exec({ op: 'job.set', id: 'j.2', execution: 1n * S });
    engine.tick(1n * S);
    report(runs[0]!, E500, 1n * S);
    report(runs[1]!, E500, 1n * S);
    engine.tick(1n * S + 1n);
    exec({ op: 'job.set', id: 'j.1', execution: 50n * S });
    exec({ op: 'job.remove', id: 'j.2' });
    expect(jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 50n * S, status: 'planned' });
    engine.tick(2n * S);
    expect(runs).to.have.length(2);
    engine.tick(50n * S);
    expect(runs.map((r) => `${r.id}#${r.run.attemptNo}`)).to.deep.equal(['j.1#1', 'j.2#1', 'j.1#1']);
  });

  /** Attempt 1 of j.1 fails; ticks at `ticks`; then a new engine on a store rebuilt from what was written. */
  const restarted = (...ticks: bigint[]) => {
    const first = setup({ retry });
    first.exec({ op: 'job.set', id: 'j.1', execution: 1n * S });
    first.engine.tick(1n * S);
    first.report(first.runs[0]!, E500, 1n * S);
    for (const t of ticks) first.engine.tick(t);
    const jobs = new JobStore();
    for (const r of first.journal.records) if (r.t === 'job') jobs.put(r.job);
    return setup({ retry }, jobs);
  };

  it('a restart between attempts keeps the number and the time: the retry is armed from the store, not run at once', () => {
    const second = restarted(1n * S + 1n);
    expect(second.engine.redispatchTriggered(1n * S + 2n)).to.equal(0);
    second.engine.tick(1n * S + 3n);
    expect(second.runs).to.have.length(0);
    second.engine.tick(2n * S);
    expect(second.runs.map((r) => r.run.attemptNo)).to.deep.equal([2]);
  });

  it('a restart while attempt 2 ran runs attempt 2 again, under its number', () => {
    const second = restarted(1n * S + 1n, 2n * S);
    expect(second.engine.redispatchTriggered(3n * S)).to.equal(1);
    expect(second.runs.map((r) => r.run.attemptNo)).to.deep.equal([2]);
  });
});

describe('engine: a burst of results', () => {
  it('10 000 failures to retry are applied over several steps, none lost: no step holds the primary for them all', () => {
    const { engine, jobs, runs, exec, report } = setup({ retry });
    for (let i = 0; i < 10_000; i++) exec({ op: 'job.set', id: `j.${i}`, execution: 1n * S });
    while (engine.tick(1n * S));
    expect(runs).to.have.length(10_000);
    for (const r of runs) report(r, E500, 1n * S);
    expect(engine.tick(1n * S + 1n), 'more to apply after one step').to.equal(true);
    expect(jobs.counts().triggered).to.equal(10_000);
    let steps = 1;
    while (engine.tick(1n * S + 1n)) steps++;
    expect(steps).to.be.greaterThan(1);
    expect(jobs.waitingForRetry()).to.have.length(10_000);
  });
});

describe('engine: concurrency and rate limits', () => {
  it('100 jobs due at once under concurrency 5: never more than 5 running, in due order, all finish', () => {
    const { engine, jobs, runs, exec, report } = setup({ concurrency: 5 });
    for (let i = 0; i < 100; i++) exec({ op: 'job.set', id: `j.${String(i).padStart(3, '0')}`, execution: 1n * S + BigInt(i) });
    let t = 2n * S;
    engine.tick(t);
    let done = 0;
    let maxRunning = 0;
    while (done < 100) {
      const running = runs.length - done;
      maxRunning = Math.max(maxRunning, running);
      expect(running).to.be.at.most(5);
      report(runs[done]!, { kind: 'http_response', status: 200 }, t, true);
      done++;
      engine.tick(t += 1000n);
    }
    expect(maxRunning).to.equal(5);
    expect(runs.map((r) => r.id)).to.deep.equal([...runs.map((r) => r.id)].sort());
    expect(jobs.counts().executed).to.equal(100);
    expect(runs[99]!.run.heldNs > 0n, "the last one was held").to.equal(true);
  });

  it('rate 10 per second: never more than 10 starts in any second of the monotonic clock; another rule is not held up', () => {
    const { engine, runs, exec, setMono } = setup({ rate: { limit: 10, per: 1n * S } });
    exec({ op: 'rule.set', rule: { id: 'other', pattern: 'k.', runner: { type: 'shell', command: 'true' } } });
    for (let i = 0; i < 35; i++) exec({ op: 'job.set', id: `j.${String(i).padStart(2, '0')}`, execution: 1n * S });
    exec({ op: 'job.set', id: 'k.1', execution: 1n * S });
    const startedAt: bigint[] = [];
    for (let ms = 0n; ms <= 4000n; ms += 100n) {
      setMono(ms * 1_000_000n);
      const before = runs.length;
      engine.tick(1n * S + ms * 1_000_000n);
      for (let i = before; i < runs.length; i++) if (runs[i]!.rule === 'r') startedAt.push(ms);
    }
    expect(runs.some((r) => r.id === 'k.1')).to.equal(true);
    expect(startedAt).to.have.length(35);
    for (let i = 10; i < startedAt.length; i++) expect(Number(startedAt[i]! - startedAt[i - 10]!)).to.be.at.least(1000);
  });

  it('a limit changed live applies at once; a rule removed while jobs wait fails them as without a rule', () => {
    const { engine, jobs, runs, exec, report } = setup({ concurrency: 1 });
    for (let i = 0; i < 4; i++) exec({ op: 'job.set', id: `j.${i}`, execution: 1n * S });
    engine.tick(1n * S);
    expect(runs).to.have.length(1);
    exec({ op: 'rule.set', rule: { id: 'r', pattern: 'j.', runner: { type: 'shell', command: 'true' }, options: { concurrency: 2 } } });
    engine.tick(1n * S + 1n);
    expect(runs).to.have.length(2);
    exec({ op: 'rule.remove', id: 'r' });
    engine.tick(1n * S + 2n);
    expect(jobs.get('j.2')!.status).to.equal('failed');
    expect(jobs.get('j.3')!.status).to.equal('failed');
    report(runs[0]!, { kind: 'http_response', status: 200 }, 1n * S, true);
    engine.tick(1n * S + 3n);
    expect(jobs.get('j.0')!.status).to.equal('executed');
  });

  it('a job SET while it waits for its limit is not run twice', () => {
    const { engine, runs, exec, report } = setup({ concurrency: 1 });
    exec({ op: 'job.set', id: 'j.a', execution: 1n * S });
    exec({ op: 'job.set', id: 'j.b', execution: 1n * S });
    engine.tick(1n * S);
    exec({ op: 'job.set', id: 'j.b', execution: 1n * S });
    let reported = 0;
    for (let i = 1n; i < 8n; i++) {
      while (reported < runs.length) report(runs[reported++]!, { kind: 'http_response', status: 200 }, 1n * S, true);
      engine.tick(1n * S + i);
    }
    expect(runs.map((r) => r.id)).to.deep.equal(['j.a', 'j.b']);
  });
});

describe('engine: retry.on', () => {
  it('the policy\'s on decides: a 404 it names is retried, a 500 it does not name fails at once', () => {
    const { engine, jobs, runs, exec, report } = setup({ retry: { ...retry, on: [{ kind: 'http_status', value: 404 }] } });
    exec({ op: 'job.set', id: 'j.1', execution: 1n * S });
    engine.tick(1n * S);
    report(runs[0]!, { kind: 'http_response', status: 404 }, 1n * S);
    engine.tick(1n * S + 1n);
    expect(jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 1n * S, status: 'triggered', attempt: 1, retryAt: 2n * S });
    engine.tick(2n * S);
    report(runs[1]!, E500, 2n * S);
    engine.tick(2n * S + 1n);
    expect(jobs.get('j.1')).to.deep.equal({ id: 'j.1', execution: 1n * S, status: 'failed', attempt: 2 });
  });

  it('RULE SET asks for format 5 with on, 4 with other options, nothing without options; refused, it names retry.on and changes nothing', () => {
    const asked: number[] = [];
    const rules = new RuleStore();
    const engine = new Engine({
      jobs: new JobStore(), rules, journal: new MemJournal(), dispatch: () => {}, stat: () => ({}) as StatValues, onPersistError: () => {},
      formatRefused: (needs) => { asked.push(needs); return needs > 4 ? `needs every node of the cluster at tickd format ${needs} or later` : null; },
    });
    const runner = { type: 'shell', command: 'true' } as const;
    const on = [{ kind: '5xx', value: 0 }] as const;
    expect(engine.execute({ op: 'rule.set', rule: { id: 'a', pattern: 'a.', runner } }).ok).to.equal(true);
    expect(engine.execute({ op: 'rule.set', rule: { id: 'b', pattern: 'b.', runner, options: { retry, concurrency: 2 } } }).ok).to.equal(true);
    expect(engine.execute({ op: 'rule.set', rule: { id: 'c', pattern: 'c.', runner, options: { retry: { ...retry, on } } } }))
      .to.deep.equal({ ok: false, code: 'invalid_args', message: 'retry.on: needs every node of the cluster at tickd format 5 or later' });
    expect(asked).to.deep.equal([4, 5]);
    expect(rules.get('c')).to.equal(undefined);
  });
});
