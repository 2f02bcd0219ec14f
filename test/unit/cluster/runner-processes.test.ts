// The primary's side of the runner children (cluster/runner-processes.ts, runner-link.ts) over
// stand-in children: the --max-inflight bound held in the primary, one 'execute' message per
// turn, starts and responses reported as the pool did, the least-loaded child chosen, a dead
// child's attempts failed (never sent again) and the queue handed to its replacement, and a
// stop that leaves what ran abandoned.
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import type { AttemptOutcome } from '../../../lib/domain/attempt.ts';
import type { Execution } from '../../../lib/runner/execution.ts';
import type { RunReport } from '../../../lib/runner/pool.ts';
import type { ExecutionRequest, FromRunnerChild, ToRunnerChild } from '../../../cluster/ipc/runner-messages.ts';
import { RunnerProcesses, runnerHeapMb } from '../../../cluster/runner-processes.ts';
import { capturingContext, makeExecution, waitFor } from '../../helpers/runner-context.ts';

const EXIT_0: AttemptOutcome = { kind: 'exit', status: 0, stderr: '' };

/** A child that records what it is sent and answers only when the test says so. */
class FakeChild extends EventEmitter {
  static next = 1000;
  readonly pid = FakeChild.next++;
  readonly heapMb: number;
  readonly got: ToRunnerChild[] = [];
  connected = true;
  killedWith: string | null = null;

  constructor(heapMb: number) {
    super();
    this.heapMb = heapMb;
  }

  send(msg: ToRunnerChild, cb: (err: Error | null) => void): boolean {
    this.got.push(msg);
    cb(null);
    return true;
  }

  kill(signal: string): boolean {
    this.killedWith = signal;
    this.die(null, signal as NodeJS.Signals);
    return true;
  }

  /** The requests of every 'execute' message so far. */
  get requests(): ExecutionRequest[] {
    return this.got.flatMap((m) => (m.t === 'execute' ? m.requests : []));
  }

  say(msg: FromRunnerChild): void {
    this.emit('message', msg);
  }

  start(...attempts: string[]): void {
    this.say({ t: 'progress', started: { attempts, startedNs: attempts.map(() => 5n) }, responses: [] });
  }

  answer(attempt: string, outcome: AttemptOutcome = EXIT_0): void {
    this.say({ t: 'progress', started: { attempts: [], startedNs: [] }, responses: [{ attempt, success: outcome.kind === 'exit' && outcome.status === 0, startedNs: 5n, durationNs: 7_000_000n, outcome }] });
  }

  die(code: number | null, signal: NodeJS.Signals | null): void {
    if (!this.connected) return;
    this.connected = false;
    this.emit('close', code, signal);
  }
}

function jobs(n: number, prefix = 'job'): Execution[] {
  return Array.from({ length: n }, (_, i) => ({ ...makeExecution({ type: 'shell', command: 'true' }, `${prefix}.${i}`), rule: 'r' }));
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

function setup(count: number, maxInflight: number, failForks = 0) {
  const children: FakeChild[] = [];
  const starts: [string, bigint][] = [];
  const results: [string, boolean, RunReport][] = [];
  const abandoned: [string, string][] = [];
  const { ctx, lines } = capturingContext();
  const rp = new RunnerProcesses({
    count, maxInflight, log: ctx.log,
    init: { shellPath: '/bin/sh', shellArgs: ['-c'], timeoutMs: 1000, logLevel: 'info', logFormat: 'json', sliceUs: 0 },
    fork: (heapMb) => {
      if (failForks-- > 0) throw Object.assign(new Error('spawn ENOMEM'), { code: 'ENOMEM' });
      const c = new FakeChild(heapMb); children.push(c); return c as unknown as ChildProcess;
    },
    onStart: (e, ns) => starts.push([e.jobId, ns]),
    onResult: (e, ok, _ms, r) => results.push([e.jobId, ok, r]),
    onAbandoned: (e, r) => abandoned.push([e.jobId, r.outcome.kind]),
  });
  rp.start();
  return { rp, children, starts, results, abandoned, lines };
}

describe('cluster/runner-processes', () => {
  it('hands at most maxInflight over, in one message per turn (the first after an idle spell at once, alone), and the rest in order as slots free', async () => {
    const { rp, children, starts, results } = setup(1, 2);
    const [child] = children;
    expect(child!.got[0]).to.include({ t: 'init' });
    expect(child!.heapMb).to.equal(runnerHeapMb(2));
    const execs = jobs(4);
    for (const e of execs) rp.submit(e);
    expect([rp.inflight, rp.pending]).to.deep.equal([2, 2]); // counted at once
    // The child held nothing: the first request left at once, so it can start while the
    // primary fires the rest of a burst; the others wait for the turn's end.
    expect(child!.got.filter((m) => m.t === 'execute').map((m) => m.t === 'execute' && m.requests.map((r) => r.jobId))).to.deep.equal([['job.0']]);
    await turn();
    expect(child!.got.filter((m) => m.t === 'execute').map((m) => m.t === 'execute' && m.requests.map((r) => r.jobId))).to.deep.equal([['job.0'], ['job.1']]);
    expect(child!.requests.map((r) => r.jobId)).to.deep.equal(['job.0', 'job.1']);
    expect(child!.requests[0]).to.deep.include({ attempt: execs[0]!.attempt, jobId: 'job.0', execution: execs[0]!.execution, runner: execs[0]!.runner });

    child!.start(execs[0]!.attempt);
    expect(starts).to.deep.equal([['job.0', 5n]]);
    child!.answer(execs[0]!.attempt);
    expect(results.map(([id, ok, r]) => [id, ok, r.startedNs, r.durationNs, r.outcome])).to.deep.equal([['job.0', true, 5n, 7_000_000n, EXIT_0]]);
    expect([rp.inflight, rp.pending]).to.deep.equal([2, 1]);
    await turn();
    expect(child!.requests.map((r) => r.jobId)).to.deep.equal(['job.0', 'job.1', 'job.2']);
    // A response whose start never came still reports a start first, at the response's time.
    child!.answer(execs[1]!.attempt);
    expect(starts.map(([id]) => id)).to.deep.equal(['job.0', 'job.1']);
  });

  it('gives each execution to the child with the fewest in flight', async () => {
    const { rp, children } = setup(2, 10);
    const execs = jobs(5);
    for (const e of execs) rp.submit(e);
    await turn();
    expect(children[0]!.requests.map((r) => r.jobId)).to.deep.equal(['job.0', 'job.2', 'job.4']);
    expect(children[1]!.requests.map((r) => r.jobId)).to.deep.equal(['job.1', 'job.3']);
    children[0]!.answer(execs[0]!.attempt);
    children[0]!.answer(execs[2]!.attempt);
    // Loads 1 and 2: the first child takes one, then the first of equals, then the second.
    for (const e of jobs(3, 'more')) rp.submit(e);
    await turn();
    expect(children[0]!.requests.map((r) => r.jobId)).to.deep.equal(['job.0', 'job.2', 'job.4', 'more.0', 'more.1']);
    expect(children[1]!.requests.map((r) => r.jobId)).to.deep.equal(['job.1', 'job.3', 'more.2']);
  });

  it('a dead child: its attempts fail with runner_error, once; the queue goes to its replacement', async () => {
    const { rp, children, results, lines } = setup(1, 2);
    const execs = jobs(4);
    for (const e of execs) rp.submit(e);
    await turn();
    children[0]!.start(execs[0]!.attempt);
    children[0]!.die(null, 'SIGKILL');
    const why = { kind: 'runner_error', error: 'the runner process exited (SIGKILL) while the attempt ran' };
    expect(results.map(([id, ok, r]) => [id, ok, r.outcome])).to.deep.equal([['job.0', false, why], ['job.1', false, why]]);
    expect(results[0]![2].startedNs).to.equal(5n); // the child's start, when it told
    expect([rp.inflight, rp.pending]).to.deep.equal([0, 2]);
    const warn = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => r['msg'] === 'runner process died; the attempts it held failed; replacing it');
    expect(warn).to.include({ level: 40, pid: children[0]!.pid, signal: 'SIGKILL', failed: 2, respawnInMs: 100 });
    await waitFor(() => children.length === 2, 2000, 'the replacement');
    await turn();
    expect(children[1]!.requests.map((r) => r.jobId)).to.deep.equal(['job.2', 'job.3']); // never job.0 or job.1 again
    expect([rp.inflight, rp.pending]).to.deep.equal([2, 0]);
  });

  it('a fork that throws (ENOMEM) is a child lost at once: the primary lives on, and a later fork takes the queue', async () => {
    const { rp, children, lines } = setup(1, 2, 1);
    expect(children).to.have.length(0);
    const execs = jobs(2);
    for (const e of execs) rp.submit(e);
    expect([rp.inflight, rp.pending]).to.deep.equal([0, 2]);
    await waitFor(() => children.length === 1, 2000, 'the replacement');
    await turn();
    expect(children[0]!.requests.map((r) => r.jobId)).to.deep.equal(['job.0', 'job.1']);
    const warn = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => r['msg'] === 'runner process died; the attempts it held failed; replacing it');
    expect(warn).to.include({ failed: 0 });
  });

  it('stop: nothing more is handed over, what ran is abandoned, an idle child is killed at once', async () => {
    const { rp, children, results, abandoned } = setup(2, 2);
    const execs = jobs(3);
    for (const e of execs) rp.submit(e);
    await turn();
    const [busy, other] = children;
    const stopped = rp.stop(250);
    expect(rp.stop(1)).to.equal(stopped);
    rp.submit(jobs(1, 'late')[0]!);
    expect(rp.pending).to.equal(0);
    expect(busy!.got.at(-1)).to.deep.equal({ t: 'stop', graceMs: 250 });
    expect(other!.got.at(-1)).to.deep.equal({ t: 'stop', graceMs: 250 });
    busy!.answer(execs[0]!.attempt); // within the grace period: reported as usual
    busy!.say({ t: 'stopped', abandoned: [] });
    other!.start(execs[1]!.attempt);
    other!.say({ t: 'stopped', abandoned: [{ attempt: execs[1]!.attempt, success: false, startedNs: 5n, durationNs: 1n, outcome: { kind: 'aborted' } }] });
    busy!.die(0, null);
    other!.die(0, null);
    await stopped;
    expect(results.map(([id]) => id)).to.deep.equal(['job.0']);
    expect(abandoned).to.deep.equal([['job.1', 'aborted']]);
    expect(rp.inflight).to.equal(0);

    // Handed over in this turn but not sent yet: abandoned without reaching the child.
    const held = setup(1, 2);
    const two = jobs(2, 'unsent');
    for (const e of two) held.rp.submit(e); // the first leaves at once (the child was idle)
    const stopping = held.rp.stop(1000);
    expect(held.abandoned).to.deep.equal([['unsent.1', 'aborted']]);
    expect(held.children[0]!.requests.map((r) => r.jobId)).to.deep.equal(['unsent.0']);
    held.children[0]!.say({ t: 'stopped', abandoned: [{ attempt: two[0]!.attempt, success: false, startedNs: 5n, durationNs: 1n, outcome: { kind: 'aborted' } }] });
    held.children[0]!.die(0, null);
    await stopping;
    expect(held.abandoned).to.deep.equal([['unsent.1', 'aborted'], ['unsent.0', 'aborted']]);
    expect(held.rp.inflight).to.equal(0);

    // A child that holds nothing is killed rather than asked.
    const idle = setup(1, 2);
    await idle.rp.stop(1000);
    expect(idle.children[0]!.killedWith).to.equal('SIGKILL');
    expect(idle.children[0]!.got.map((m) => m.t)).to.deep.equal(['init']);
  });
});
