import { expect } from 'chai';
import type { AttemptOutcome } from '../../../lib/domain/attempt.ts';
import type { Execution, RunnerContext } from '../../../lib/runner/execution.ts';
import { RunnerPool, type RunReport } from '../../../lib/runner/pool.ts';
import { capturingContext, makeExecution, waitFor } from '../../helpers/runner-context.ts';

const EXIT_0: AttemptOutcome = { kind: 'exit', status: 0, stderr: '' };
const EXIT_1: AttemptOutcome = { kind: 'exit', status: 1, stderr: 'no\n' };
/** The outcome of a run that succeeded or failed. */
const outcome = (ok: boolean): AttemptOutcome => (ok ? EXIT_0 : EXIT_1);

interface Call {
  exec: Execution;
  signal: AbortSignal;
  resolve: (ok: boolean) => void;
}

/** A fake runner whose executions finish only when the test says so. */
function controllableRun() {
  const calls: Call[] = [];
  const run = (exec: Execution, _ctx: RunnerContext, signal: AbortSignal) =>
    new Promise<AttemptOutcome>((resolve) => { calls.push({ exec, signal, resolve: (ok) => resolve(outcome(ok)) }); });
  return { calls, run };
}

function jobs(n: number): Execution[] {
  return Array.from({ length: n }, (_, i) => makeExecution({ type: 'shell', command: 'true' }, `job.${i}`));
}

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('runner/pool', () => {
  it('runs at most maxInflight at once and queues the rest in FIFO order', async () => {
    const { calls, run } = controllableRun();
    const results: [string, boolean][] = [];
    const pool = new RunnerPool({ maxInflight: 2, ctx: capturingContext().ctx, run, onResult: (e, ok) => results.push([e.jobId, ok]) });
    const execs = jobs(5);
    const counts = () => [pool.inflight, pool.pending, calls.length];

    for (const e of execs) pool.submit(e);
    await settle(); // the first turn after idle may start fewer (see the per-turn budget below)
    expect(counts()).to.deep.equal([2, 3, 2]);
    expect(calls.map((c) => c.exec.jobId)).to.deep.equal(['job.0', 'job.1']);

    calls[1]!.resolve(false);
    await settle();
    expect(results).to.deep.equal([['job.1', false]]);
    expect(counts()).to.deep.equal([2, 2, 3]);

    calls[0]!.resolve(true);
    await settle();
    expect(counts()).to.deep.equal([2, 1, 4]);

    calls[2]!.resolve(true);
    calls[3]!.resolve(true);
    await settle();
    expect(counts()).to.deep.equal([1, 0, 5]);

    calls[4]!.resolve(true);
    await settle();
    expect(counts()).to.deep.equal([0, 0, 5]);
    expect(calls.map((c) => c.exec.jobId)).to.deep.equal(['job.0', 'job.1', 'job.2', 'job.3', 'job.4']);
    expect(results.map(([id]) => id)).to.deep.equal(['job.1', 'job.0', 'job.2', 'job.3', 'job.4']);
  });

  it('never calls onResult synchronously inside submit, and reports a duration', async () => {
    const results: number[] = [];
    const pool = new RunnerPool({ maxInflight: 4, ctx: capturingContext().ctx, run: async () => EXIT_0, onResult: (_e, _ok, ms) => results.push(ms) });
    pool.submit(jobs(1)[0]!);
    expect(results).to.have.length(0);
    await settle();
    expect(results).to.have.length(1);
    expect(results[0]).to.be.a('number').and.at.least(0);
  });

  it('turns a runner that throws or rejects into a failure and keeps going', async () => {
    const results: [string, boolean][] = [];
    const run = (exec: Execution): Promise<AttemptOutcome> => {
      if (exec.jobId === 'job.0') throw new Error('sync bug');
      if (exec.jobId === 'job.1') return Promise.reject(new Error('async bug'));
      return Promise.resolve(EXIT_0);
    };
    const { ctx, lines } = capturingContext();
    const pool = new RunnerPool({ maxInflight: 1, ctx, run, onResult: (e, ok) => results.push([e.jobId, ok]) });
    for (const e of jobs(3)) pool.submit(e);
    await waitFor(() => results.length === 3, 2000, 'three results');
    expect(results).to.deep.equal([['job.0', false], ['job.1', false], ['job.2', true]]);
    expect(lines.filter((l) => l.includes('runner failed unexpectedly'))).to.have.length(2);
    expect(pool.inflight).to.equal(0);
  });

  it('survives an onResult that throws', async () => {
    let calls = 0;
    const pool = new RunnerPool({ maxInflight: 1, ctx: capturingContext().ctx, run: async () => EXIT_0, onResult: () => { calls++; throw new Error('boom'); } });
    for (const e of jobs(3)) pool.submit(e);
    await waitFor(() => calls === 3, 2000, 'three results');
    expect(pool.inflight).to.equal(0);
  });

  it('stop() waits for running executions within the grace time and drops the queue', async () => {
    const { calls, run } = controllableRun();
    const results: string[] = [];
    const pool = new RunnerPool({ maxInflight: 2, ctx: capturingContext().ctx, run, onResult: (e) => results.push(e.jobId) });
    for (const e of jobs(5)) pool.submit(e);
    let stopped = false;
    const stopping = pool.stop(10_000).then(() => { stopped = true; });
    expect(pool.pending).to.equal(0);
    pool.submit(jobs(1)[0]!);
    expect([pool.inflight, pool.pending]).to.deep.equal([2, 0]);

    calls[0]!.resolve(true);
    await settle();
    expect(stopped).to.equal(false);
    calls[1]!.resolve(true);
    await stopping;
    expect(results).to.deep.equal(['job.0', 'job.1']);
    expect(calls).to.have.length(2);
    expect(calls.every((c) => !c.signal.aborted)).to.equal(true);
  });

  it('stop() aborts what is still running after the grace time and does not report it', async () => {
    const { calls, run } = controllableRun();
    const results: string[] = [];
    const pool = new RunnerPool({ maxInflight: 3, ctx: capturingContext().ctx, run, onResult: (e) => results.push(e.jobId) });
    for (const e of jobs(3)) pool.submit(e);
    calls[0]!.resolve(true);
    await settle();
    const started = Date.now();
    await pool.stop(50);
    expect(Date.now() - started).to.be.at.least(40);
    expect(calls.map((c) => c.signal.aborted)).to.deep.equal([false, true, true]);
    expect(pool.inflight).to.equal(0);
    calls[1]!.resolve(true);
    calls[2]!.resolve(false);
    await settle();
    expect(results).to.deep.equal(['job.0']);
  });

  it('stop() with nothing running resolves at once', async () => {
    const pool = new RunnerPool({ maxInflight: 1, ctx: capturingContext().ctx, run: async () => EXIT_0, onResult: () => {} });
    const started = Date.now();
    const first = pool.stop(10_000);
    expect(pool.stop(5)).to.equal(first);
    await first;
    expect(Date.now() - started).to.be.below(1000);
  });

  it('keeps FIFO order through a long queue', async () => {
    const order: string[] = [];
    const pool = new RunnerPool({ maxInflight: 1, ctx: capturingContext().ctx, run: async () => EXIT_0, onResult: (e) => order.push(e.jobId) });
    const execs = jobs(20_000);
    for (const e of execs) pool.submit(e);
    expect(pool.pending).to.equal(19_999);
    await waitFor(() => order.length === execs.length, 10_000, 'the queue to drain');
    expect(order).to.deep.equal(execs.map((e) => e.jobId));
    expect([pool.inflight, pool.pending]).to.deep.equal([0, 0]);
  });

  it('times its starts per event-loop turn: after an idle spell a short first turn, then full turns', async () => {
    // Each start takes 0.6 ms: more than the first turn's budget (0.5 ms), a fraction of a full one (4 ms).
    const { calls, run: hold } = controllableRun();
    const run = (exec: Execution, ctx: RunnerContext, signal: AbortSignal) => {
      const until = performance.now() + 0.6;
      while (performance.now() < until) { /* a costly start, such as a spawn from a big heap */ }
      return hold(exec, ctx, signal);
    };
    const pool = new RunnerPool({ maxInflight: 100, ctx: capturingContext().ctx, run, onResult: () => {} });
    for (const e of jobs(30)) pool.submit(e);
    expect(calls.length, 'the first turn, from idle').to.equal(1);
    // Then full turns. The budget is wall time, and a loaded machine can take a turn's CPU away
    // (a CI run saw a turn start one), so the largest of the turns is what is checked.
    const perTurn: number[] = [];
    for (let i = 0; i < 40 && calls.length < 30; i++) {
      const before = calls.length;
      await settle();
      perTurn.push(calls.length - before);
    }
    expect(Math.max(...perTurn), `then full turns (${perTurn.join(' ')})`).to.be.at.least(3);
    await waitFor(() => calls.length === 30, 5000, 'the rest to start');
    for (const c of calls) c.resolve(true);
    await waitFor(() => pool.inflight === 0, 5000, 'the pool to be idle');
    await settle();
    for (const e of jobs(3)) pool.submit(e);
    expect(calls.length, 'idle again: a short first turn').to.equal(31);
  });

  it('rejects a maxInflight that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => new RunnerPool({ maxInflight: bad, ctx: capturingContext().ctx, onResult: () => {} })).to.throw(RangeError);
    }
  });
  it('reports each start, then each result with its outcome, start time and duration', async () => {
    const { calls, run } = controllableRun();
    const events: string[] = [];
    const reports: RunReport[] = [];
    const pool = new RunnerPool({
      maxInflight: 1, ctx: capturingContext().ctx, run,
      onStart: (e, startedNs) => { events.push(`start ${e.jobId}`); expect(startedNs > 1_600_000_000_000_000_000n).to.equal(true); },
      onResult: (e, ok, ms, report) => { events.push(`result ${e.jobId} ${ok}`); reports.push(report); expect(ms).to.equal(Number(report.durationNs) / 1e6); },
    });
    const [a, b] = jobs(2);
    pool.submit(a!);
    pool.submit(b!);
    expect(events).to.deep.equal(['start job.0']);
    await new Promise((r) => setTimeout(r, 20));
    calls[0]!.resolve(false);
    await waitFor(() => calls.length === 2, 2000, 'the second start');
    calls[1]!.resolve(true);
    await waitFor(() => reports.length === 2, 2000, 'two results');
    expect(events).to.deep.equal(['start job.0', 'result job.0 false', 'start job.1', 'result job.1 true']);
    expect(reports.map((r) => r.outcome)).to.deep.equal([EXIT_1, EXIT_0]);
    expect(reports[0]!.durationNs >= 15_000_000n, 'ran about 20 ms').to.equal(true);
    expect(reports[1]!.startedNs >= reports[0]!.startedNs + reports[0]!.durationNs).to.equal(true);
  });

  it('a runner that throws is a runner error; success follows the outcome, not the runner', async () => {
    const results: Array<[boolean, AttemptOutcome]> = [];
    const outcomes: AttemptOutcome[] = [{ kind: 'http_response', status: 204 }, { kind: 'http_response', status: 302 }, { kind: 'delivered' }];
    const run = (exec: Execution): Promise<AttemptOutcome> => {
      const i = Number(exec.jobId.slice('job.'.length));
      return i < outcomes.length ? Promise.resolve(outcomes[i]!) : Promise.reject(new Error('bug'));
    };
    const pool = new RunnerPool({ maxInflight: 1, ctx: capturingContext().ctx, run, onResult: (_e, ok, _ms, r) => results.push([ok, r.outcome]) });
    for (const e of jobs(4)) pool.submit(e);
    await waitFor(() => results.length === 4, 2000, 'four results');
    expect(results.map(([ok]) => ok)).to.deep.equal([true, false, true, false]);
    expect(results[3]![1]).to.deep.equal({ kind: 'runner_error', error: 'the runner failed unexpectedly' });
  });

  it('stop() tells onAbandoned of each execution it gave up on, outcome aborted', async () => {
    const { calls, run } = controllableRun();
    const abandoned: Array<[string, string]> = [];
    const pool = new RunnerPool({ maxInflight: 2, ctx: capturingContext().ctx, run, onResult: () => {}, onAbandoned: (e, r) => abandoned.push([e.jobId, r.outcome.kind]) });
    for (const e of jobs(2)) pool.submit(e);
    calls[0]!.resolve(true);
    await settle();
    await pool.stop(0);
    expect(abandoned).to.deep.equal([['job.1', 'aborted']]);
  });
});
