// Execution placement (lib/placement/; issue 40) without the daemon: several Placement
// instances, one per node name, each on its own connection to one real nats-server, with the
// members' view, the runner processes and the leader's engine faked (test/helpers/
// placement-fakes.ts). What goes where, what a leader hears back, what a lost node's
// executions become, what survives a leader change, and what a peer without the cluster's
// key, or with it but a message of the wrong shape, can make happen: nothing.
import { expect } from 'chai';
import { deserialize, serialize } from 'node:v8';
import type { NatsConnection } from '@nats-io/transport-node';
import { closeNatsClients, connectNats, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { execution, FakeCluster, finished, type FakeNode } from '../helpers/placement-fakes.ts';
import { testKeys } from '../helpers/cluster-secret.ts';
import { waitFor } from '../helpers/client.ts';
import { ClusterKeys } from '../../lib/jetstream/cluster-keys.ts';
import { openAnswer, sealRequest } from '../../lib/jetstream/forward-seal.ts';
import { RUN_FRESH_MS } from '../../lib/placement/executor.ts';
import { ANSWER_CONTEXT, ask, EXEC_CONTEXT, execSubject, NO_ANSWER, RESULTS_CONTEXT, resultsSubject, type WireParts } from '../../lib/placement/wire.ts';
import type { PlacedResult } from '../../lib/placement/messages.ts';
import type { Execution } from '../../lib/runner/execution.ts';
import { silentLogger } from '../../lib/log.ts';

/** The context wire.ts seals its answers under (not exported: only wire.ts answers). */
const foreignKeys = new ClusterKeys(['another-cluster-secret-0123456789abcdef0123456789abcdef']);
/** Long enough for the leader's check (every 250 ms) and the executor's resend (250 ms) to have run a few times. */
const QUIET_MS = 800;
const quiet = (): Promise<void> => new Promise((r) => setTimeout(r, QUIET_MS));

describe('execution placement on the wire (lib/placement/, one nats-server)', function () {
  this.timeout(30_000);
  let nats: NatsCluster;
  let clusters: FakeCluster[] = [];
  let count = 0;

  before(async function () {
    nats = await startNats(requireNatsServer(this), 1);
  });

  afterEach(async () => {
    await Promise.all(clusters.map((c) => c.close()));
    clusters = [];
  });

  after(async () => {
    await closeNatsClients();
    await nats?.stop();
  });

  /** A cluster name of this test's own: no subject of another test's nodes is shared. */
  function cluster(): FakeCluster {
    const c = new FakeCluster(`pw${++count}`, nats.urls);
    clusters.push(c);
    return c;
  }

  /** Leader "a" (no tags), "b" and "c" with these tags, a's census over. */
  async function led(bTags: readonly string[] = ['gpu'], cTags: readonly string[] = []): Promise<{ w: FakeCluster; a: FakeNode; b: FakeNode; c: FakeNode }> {
    const w = cluster();
    const a = await w.node('a');
    const b = await w.node('b', { tags: bTags });
    const c = await w.node('c', { tags: cTags });
    await w.leader(a);
    return { w, a, b, c };
  }

  /** Places a gpu execution from `leader` (on b), has b finish it, and waits for the leader's engine to hear. */
  async function runsOnB(leader: FakeNode, b: FakeNode): Promise<PlacedResult> {
    const exec = execution('job-legit');
    const before = b.submitted.length;
    leader.placement.dispatch(exec, ['gpu']);
    await waitFor(() => b.submitted.length > before, 5_000, 'b to be handed the execution');
    expect(b.submitted.at(-1)).to.deep.equal(exec);
    b.placement.executor.push(exec.jobId, exec.attempt, true, finished());
    await waitFor(() => leader.engine.results.some((r) => r.attempt === exec.attempt), 5_000, 'the result at the leader');
    return leader.engine.results.find((r) => r.attempt === exec.attempt)!;
  }

  it('places an execution on the only node with its tags, and that node\'s result reaches the leader, marked with it', async () => {
    const { a, b } = await led();
    const exec = execution('job-1');
    a.placement.dispatch(exec, ['gpu']);
    await waitFor(() => b.submitted.length === 1, 5_000, 'b to run it');
    expect(b.submitted[0]).to.deep.equal(exec);
    expect(a.submitted).to.deep.equal([]);
    expect(a.placement.view()).to.deep.equal({ waiting: 0, placed: { b: 1 } });
    expect(b.placement.counts()).to.deep.equal({ running: 1, waiting: 0 });
    b.placement.executor.push(exec.jobId, exec.attempt, false, finished(3));
    await waitFor(() => a.engine.results.length === 1, 5_000, 'the result at a');
    const r = a.engine.results[0]!;
    expect(r).to.deep.include({ jobId: 'job-1', attempt: exec.attempt, success: false });
    expect(r.record).to.deep.equal({ ...finished(3), node: 'b' });
    expect(a.placement.view().placed).to.deep.equal({});
    expect(b.placement.executor.held()).to.deep.equal([]);
    expect(b.engine.results).to.deep.equal([]); // b does not lead: its engine hears nothing
  });

  it('places an execution without tags on the least loaded node, the leader first among equals, and spreads many by load for capacity', async () => {
    const w = cluster();
    const a = await w.node('a', { capacity: 2 });
    const b = await w.node('b', { capacity: 2 });
    const c = await w.node('c', { capacity: 4 });
    await w.leader(a);
    const first = execution('job-first');
    a.placement.dispatch(first, undefined);
    await waitFor(() => a.submitted.length === 1, 5_000, 'a to run it');
    expect(a.submitted[0]).to.deep.equal(first);
    a.placement.executor.push(first.jobId, first.attempt, true, finished());
    // The leader's own result goes straight to its engine.
    expect(a.engine.results.map((r) => [r.attempt, r.record.node])).to.deep.equal([[first.attempt, 'a']]);
    expect(a.placement.view().placed).to.deep.equal({});

    const many = Array.from({ length: 8 }, (_, i) => execution(`job-${i}`));
    for (const e of many) a.placement.dispatch(e, []);
    expect(a.placement.view().placed).to.deep.equal({ a: 2, b: 2, c: 4 });
    await waitFor(() => a.submitted.length + b.submitted.length + c.submitted.length === 9, 5_000, 'all eight to be handed out');
    expect([a.submitted.length - 1, b.submitted.length, c.submitted.length]).to.deep.equal([2, 2, 4]);
    expect(new Set([...a.submitted.slice(1), ...b.submitted, ...c.submitted].map((e) => e.attempt)).size).to.equal(8);
  });

  it('an execution whose tags no node has waits, says why, then fails with outcome no_node after waitMs', async () => {
    const w = cluster();
    const a = await w.node('a', { waitMs: 300 });
    const b = await w.node('b', { tags: ['gpu'] });
    await w.leader(a);
    const exec = execution('job-nowhere');
    const started = performance.now();
    a.placement.dispatch(exec, ['gpu', 'ssd']);
    expect(a.placement.waitingFor('job-nowhere')).to.deep.include({ on: ['gpu', 'ssd'] });
    expect(a.placement.counts()).to.deep.equal({ running: 0, waiting: 1 });
    expect(a.placement.view()).to.deep.equal({ waiting: 1, placed: {} });
    await waitFor(() => a.engine.noNodes.length === 1, 5_000, 'the no_node failure');
    expect(performance.now() - started).to.be.at.least(300);
    const { exec: failed, record } = a.engine.noNodes[0]!;
    expect(failed).to.deep.equal(exec);
    expect(record.outcome).to.deep.equal({ kind: 'no_node', on: ['gpu', 'ssd'] });
    expect(record).to.not.have.property('node');
    expect(a.placement.waitingFor('job-nowhere')).to.equal(undefined);
    expect(a.placement.counts().waiting).to.equal(0);
    expect([...a.submitted, ...b.submitted]).to.deep.equal([]);
    await quiet();
    expect(a.engine.noNodes).to.have.length(1);
  });

  it('an execution waiting for its tags goes to a node that has them once that node comes', async () => {
    const w = cluster();
    const a = await w.node('a', { waitMs: 10_000 });
    await w.leader(a);
    const exec = execution('job-later');
    a.placement.dispatch(exec, ['gpu']);
    expect(a.placement.counts().waiting).to.equal(1);
    const b = await w.node('b', { tags: ['gpu'] });
    await waitFor(() => b.submitted.length === 1, 5_000, 'b to be handed it');
    expect(b.submitted[0]).to.deep.equal(exec);
    expect(a.placement.counts().waiting).to.equal(0);
    expect(a.engine.noNodes).to.deep.equal([]);
  });

  it('the executions of a node members says is lost are each given to the engine to run again, once', async () => {
    const { w, a, b, c } = await led(['gpu'], ['ssd']);
    const onB = [execution('job-b1'), execution('job-b2')];
    const onC = execution('job-c');
    for (const e of onB) a.placement.dispatch(e, ['gpu']);
    a.placement.dispatch(onC, ['ssd']);
    await waitFor(() => b.submitted.length === 2 && c.submitted.length === 1, 5_000, 'b and c to run them');
    await quiet(); // b slow to report is not b lost
    expect(a.engine.reruns).to.deep.equal([]);

    w.lost.add('b');
    await waitFor(() => a.engine.reruns.length === 2, 5_000, 'the reruns');
    expect(a.engine.reruns).to.have.deep.members(onB.map((e) => ({ jobId: e.jobId, attempt: e.attempt })));
    expect(a.placement.view().placed).to.deep.equal({ c: 1 });
    await quiet();
    expect(a.engine.reruns).to.have.length(2);
    // b's late result reaches the engine (which finds the attempt stale); the load stays c's alone.
    b.placement.executor.push(onB[0]!.jobId, onB[0]!.attempt, true, finished());
    await waitFor(() => a.engine.results.length === 1, 5_000, 'b\'s late result');
    expect(a.placement.view().placed).to.deep.equal({ c: 1 });
    expect(a.engine.reruns).to.have.length(2);
  });

  it('a node forgets a result only once the leader made it durable; one the leader dropped reaches the next leader', async () => {
    const { w, a, b, c } = await led(['gpu']);
    const exec = execution('job-durable');
    a.placement.dispatch(exec, ['gpu']);
    await waitFor(() => b.submitted.length === 1, 5_000, 'b to run it');
    a.engine.holdDurable = true;
    b.placement.executor.push(exec.jobId, exec.attempt, true, finished());
    await waitFor(() => a.engine.undurable.length === 1, 5_000, 'the result at the leader');
    await quiet();
    expect(b.placement.executor.held().map((h) => h.attempt), 'held until durable').to.deep.equal([exec.attempt]);
    // The leader steps down before writing it: the next one adopts the attempt and takes the result.
    a.placement.demoted();
    c.engine.adoptable.add(exec.attempt);
    await w.leader(c);
    await waitFor(() => c.engine.results.length === 1, 5_000, 'the result at the next leader');
    expect(c.engine.results[0]!.attempt).to.equal(exec.attempt);
    await waitFor(() => b.placement.executor.held().length === 0, 5_000, 'b to forget it once c made it durable');
  });

  it('a node that restarted under the same name holds nothing its earlier process was given: given away at once, not after the loss bound', async () => {
    const { w, a, b } = await led(['gpu']);
    const exec = execution('job-restarted');
    a.placement.dispatch(exec, ['gpu']);
    await waitFor(() => b.submitted.length === 1, 5_000, 'b to run it');
    await quiet();
    expect(a.engine.reruns).to.deep.equal([]);
    await b.placement.close(0); // b's process goes; a new one takes its name (members still hears of a "b")
    await w.node('b', { tags: ['gpu'] });
    await waitFor(() => a.engine.reruns.length === 1, 5_000, 'the rerun');
    expect(a.engine.reruns).to.deep.equal([{ jobId: exec.jobId, attempt: exec.attempt }]);
    expect(w.lost.has('b'), 'never said lost').to.equal(false);
    expect(a.placement.view().placed).to.deep.equal({});
  });

  it('a run a node does not answer is sent to it again, and given away only once the node is lost', async () => {
    const w = cluster();
    const a = await w.node('a');
    const x = await w.node('x', { tags: ['gpu'] });
    x.placement.stopTaking(); // what listens on x's subject now answers nothing readable
    const mute = await connectNats(nats.urls);
    const runs: number[] = [];
    mute.subscribe(execSubject(w.name, 'x'), { callback: (_err, m) => { runs.push(performance.now()); m.respond(Buffer.alloc(0)); } });
    await mute.flush();
    a.placement.promoted();
    await quiet();
    expect(a.engine.redispatched, 'a census waits for a node that does not answer').to.equal(0);
    w.lost.add('x');
    await waitFor(() => a.engine.redispatched === 1, 5_000, 'the census to give x up');
    w.lost.delete('x'); // heard of again
    const exec = execution('job-unanswered');
    a.placement.dispatch(exec, ['gpu']);
    await waitFor(() => runs.length >= 3, 5_000, 'the run to be sent again');
    expect(a.engine.reruns).to.deep.equal([]);
    expect(a.placement.view().placed).to.deep.equal({ x: 1 });
    w.lost.add('x');
    await waitFor(() => a.engine.reruns.length === 1, 5_000, 'the rerun');
    expect(a.engine.reruns[0]).to.deep.equal({ jobId: exec.jobId, attempt: exec.attempt });
    const sent = runs.length;
    await quiet();
    expect(runs.length).to.be.at.most(sent + 1); // one already on its way, none after
    expect(a.engine.reruns).to.have.length(1);
    expect(a.placement.view().placed).to.deep.equal({});
  });

  it('a result finished while nobody leads waits at its node, and the next leader, having adopted the attempt, takes it once', async () => {
    const { w, a, b, c } = await led();
    const exec = execution('job-carried');
    a.placement.dispatch(exec, ['gpu']);
    await waitFor(() => b.submitted.length === 1, 5_000, 'b to run it');
    a.placement.demoted();

    b.placement.executor.push(exec.jobId, exec.attempt, true, finished());
    await quiet(); // several sends found no leader
    expect(b.placement.executor.held()).to.deep.equal([{ jobId: exec.jobId, attempt: exec.attempt, execution: exec.execution, attemptNo: 1 }]);
    expect(a.engine.results).to.deep.equal([]);

    c.engine.adoptable.add(exec.attempt);
    await w.leader(c);
    await waitFor(() => c.engine.results.length === 1, 5_000, 'the result at c');
    expect(c.engine.adopted).to.deep.equal([{ jobId: exec.jobId, attempt: exec.attempt, execution: exec.execution, attemptNo: 1 }]);
    expect(c.engine.events).to.deep.equal([`adopt ${exec.attempt}`, 'redispatch', `result ${exec.attempt}`]);
    expect(c.engine.results[0]).to.deep.include({ attempt: exec.attempt, success: true });
    expect(c.engine.results[0]!.record.node).to.equal('b');
    await quiet();
    expect(c.engine.results).to.have.length(1);
    expect(c.placement.view().placed).to.deep.equal({});
    expect(b.placement.executor.held()).to.deep.equal([]);
    expect(a.engine.results).to.deep.equal([]);
    expect(c.engine.reruns).to.deep.equal([]);
  });

  it('a run sent to a node that takes no more (a graceful stop) goes to another node with the tags', async () => {
    const { a, b, c } = await led(['gpu'], ['gpu']);
    b.placement.stopTaking(); // b still says it runs executions (members), but listens no more
    await b.nc.flush();
    const exec = execution('job-elsewhere');
    a.placement.dispatch(exec, ['gpu']); // b first among equals: nobody answers, so c
    await waitFor(() => c.submitted.length === 1, 5_000, 'c to be handed it');
    expect(c.submitted[0]).to.deep.equal(exec);
    expect(b.submitted).to.deep.equal([]);
    expect(a.placement.view().placed).to.deep.equal({ c: 1 });
    c.placement.executor.push(exec.jobId, exec.attempt, true, finished());
    await waitFor(() => a.engine.results.length === 1, 5_000, 'the result at a');
    expect(a.engine.results[0]!.record.node).to.equal('c');
    expect(a.engine.reruns).to.deep.equal([]);
  });

  describe('hostile peers run nothing, change nothing and crash nothing', () => {
    let hostile: NatsConnection;
    before(async () => {
      hostile = await connectNats(nats.urls);
    });

    /** The answer to `body` on `subject`: the bytes of every chunk before the empty one. */
    async function raw(subject: string, body: Uint8Array): Promise<Buffer> {
      const chunks: Uint8Array[] = [];
      for await (const m of await hostile.requestMany(subject, body, { strategy: 'sentinel', maxWait: 2_000 })) if (m.data.length > 0) chunks.push(m.data);
      return Buffer.concat(chunks);
    }

    /** A request answered at once with nothing: refused. */
    async function refused(subject: string, body: Uint8Array): Promise<void> {
      const m = await hostile.request(subject, body, { timeout: 2_000 });
      expect(m.data.length, `the answer on ${subject}`).to.equal(0);
    }

    const sealed = (w: FakeCluster, to: string, payload: unknown, context: Buffer, keys = testKeys) =>
      sealRequest(keys, w.name, to, serialize(payload), Date.now(), context);
    const wire = (w: FakeCluster, keys = testKeys): WireParts => ({ nc: hostile, keys, cluster: w.name, log: silentLogger() });
    const resultOf = (exec: Execution): PlacedResult => ({ jobId: exec.jobId, attempt: exec.attempt, success: true, record: { ...finished(), node: 'b' } });

    it('garbage, published or requested, on a node\'s and on the results subject', async () => {
      const { w, a, b } = await led();
      for (const subject of [execSubject(w.name, 'b'), resultsSubject(w.name)]) {
        for (const body of [Buffer.from('garbage'), Buffer.alloc(0), Buffer.alloc(200, 0xf2), Buffer.concat([Buffer.of(0xf2), Buffer.alloc(60)])]) {
          hostile.publish(subject, body);
          await refused(subject, body);
        }
      }
      expect(b.submitted).to.deep.equal([]);
      expect(a.engine.results).to.deep.equal([]);
      expect((await runsOnB(a, b)).record.node).to.equal('b');
    });

    it('a run sealed with another cluster\'s key, or addressed to another node, or under the results context', async () => {
      const { w, a, b } = await led();
      const exec = execution('job-forged');
      await refused(execSubject(w.name, 'b'), sealed(w, w.addressOf('b'), { op: 'run', execs: [exec] }, EXEC_CONTEXT, foreignKeys).body);
      await refused(execSubject(w.name, 'b'), sealed(w, w.addressOf('b'), { op: 'census' }, EXEC_CONTEXT, foreignKeys).body);
      await refused(execSubject(w.name, 'b'), sealed(w, w.addressOf('c'), { op: 'run', execs: [exec] }, EXEC_CONTEXT).body);
      await refused(execSubject(w.name, 'b'), sealed(w, w.addressOf('b'), { op: 'run', execs: [exec] }, RESULTS_CONTEXT).body);
      expect(await ask(wire(w, foreignKeys), execSubject(w.name, 'b'), w.addressOf('b'), EXEC_CONTEXT, { op: 'run', execs: [exec] }, 2_000)).to.equal(NO_ANSWER);
      expect(b.submitted).to.deep.equal([]);
      expect(b.placement.executor.held()).to.deep.equal([]);
      expect((await runsOnB(a, b)).attempt).to.not.equal(exec.attempt);
    });

    it('a run sealed more than RUN_FRESH_MS ago (the node was stopped meanwhile) is refused as stale, and runs nothing', async () => {
      const w = cluster();
      const b = await w.node('b', { tags: ['gpu'] });
      const exec = execution('job-stale-run');
      const old = sealRequest(testKeys, w.name, w.addressOf('b'), serialize({ op: 'run', execs: [exec] }), Date.now() - RUN_FRESH_MS - 1_000, EXEC_CONTEXT);
      expect(deserialize(openAnswer(testKeys, w.name, old.nonce, await raw(execSubject(w.name, 'b'), old.body), ANSWER_CONTEXT)!)).to.deep.equal({ taken: 0, stale: true });
      expect(b.submitted).to.deep.equal([]);
      const fresh = sealRequest(testKeys, w.name, w.addressOf('b'), serialize({ op: 'run', execs: [exec] }), Date.now(), EXEC_CONTEXT);
      expect(deserialize(openAnswer(testKeys, w.name, fresh.nonce, await raw(execSubject(w.name, 'b'), fresh.body), ANSWER_CONTEXT)!)).to.deep.equal({ taken: 1 });
      expect(b.submitted).to.deep.equal([exec]);
    });

    it('the same sealed run sent twice: the copy is refused', async () => {
      const { w, a, b } = await led();
      const exec = execution('job-replayed');
      const run = sealed(w, w.addressOf('b'), { op: 'run', execs: [exec] }, EXEC_CONTEXT);
      const first = openAnswer(testKeys, w.name, run.nonce, await raw(execSubject(w.name, 'b'), run.body), ANSWER_CONTEXT);
      expect(first).to.not.equal(null);
      expect(deserialize(first!)).to.deep.equal({ taken: 1 });
      await refused(execSubject(w.name, 'b'), run.body);
      expect(b.submitted).to.deep.equal([exec]);
      expect((await runsOnB(a, b)).record.node).to.equal('b');
    });

    // The nonces a run was seen with live as long as the process that saw it, so a copy of a run
    // captured on NATS would run again on the node's next process if sent within FRESH_MS (60 s)
    // of its seal, were runs addressed to the node's name: they are addressed to its process.
    it('a sealed run copied and sent again to the node\'s next process is refused', async () => {
      const w = cluster();
      const first = await w.node('b', { tags: ['gpu'] });
      const exec = execution('job-copied');
      const run = sealed(w, w.addressOf('b'), { op: 'run', execs: [exec] }, EXEC_CONTEXT);
      expect(deserialize(openAnswer(testKeys, w.name, run.nonce, await raw(execSubject(w.name, 'b'), run.body), ANSWER_CONTEXT)!)).to.deep.equal({ taken: 1 });
      await first.placement.close(0);
      await first.nc.close();
      const next = await w.node('b', { tags: ['gpu'] });
      await refused(execSubject(w.name, 'b'), run.body);
      expect(next.submitted).to.deep.equal([]);
    });

    it('results: the leader passes on a sealed one (stale or not: the engine judges), never a forged one', async () => {
      const { w, a, b } = await led();
      const stale = execution('job-stale');
      await refused(resultsSubject(w.name), sealed(w, '', { node: 'b', results: [resultOf(stale)] }, RESULTS_CONTEXT, foreignKeys).body);
      await refused(resultsSubject(w.name), sealed(w, '', { node: 'b', results: [resultOf(stale)] }, EXEC_CONTEXT).body);
      await refused(resultsSubject(w.name), sealed(w, 'a', { node: 'b', results: [resultOf(stale)] }, RESULTS_CONTEXT).body);
      expect(a.engine.results).to.deep.equal([]);
      expect(await ask(wire(w), resultsSubject(w.name), '', RESULTS_CONTEXT, { node: 'b', results: [resultOf(stale)] }, 2_000))
        .to.deep.equal({ taken: [stale.attempt] });
      expect(a.engine.results).to.deep.equal([resultOf(stale)]);
      expect(a.placement.view().placed).to.deep.equal({});
      expect(b.engine.results).to.deep.equal([]);
      await runsOnB(a, b);
      expect(a.engine.results).to.have.length(2);
    });

    it('correctly sealed messages of odd shapes run and pass on nothing', async () => {
      const { w, a, b } = await led();
      const exec = execution('job-odd');
      const askB = (payload: unknown) => ask(wire(w), execSubject(w.name, 'b'), w.addressOf('b'), EXEC_CONTEXT, payload, 2_000);
      const askResults = (payload: unknown) => ask(wire(w), resultsSubject(w.name), '', RESULTS_CONTEXT, payload, 2_000);
      expect(await askB({ op: 'run', execs: [{ attempt: 'x' }] })).to.deep.equal({ taken: 0 });
      expect(await askB({ op: 'run', execs: [{ ...exec, execution: 5 }, { ...exec, attempt: exec.attempt.toUpperCase() }, { ...exec, runner: 'shell' }] }))
        .to.deep.equal({ taken: 0 });
      expect(await askB({ op: 'run', execs: Array.from({ length: 30_000 }, (_, i) => ({ attempt: String(i), jobId: i })) })).to.deep.equal({ taken: 0 });
      for (const odd of [{ op: 'run', execs: 'all' }, { op: 'delete' }, 42, 'census', null, [exec]]) expect(await askB(odd)).to.equal(null);
      await refused(execSubject(w.name, 'b'), sealRequest(testKeys, w.name, 'b', Buffer.from('not a v8 serialization'), Date.now(), EXEC_CONTEXT).body);
      expect(await askResults({ node: 'b', results: [{ attempt: 'x' }, { ...resultOf(exec), record: { outcome: {}, startedNs: 5 } }] })).to.deep.equal({ taken: [] });
      for (const odd of [{ node: 1, results: [resultOf(exec)] }, { node: 'b', results: resultOf(exec) }, [resultOf(exec)], 7]) expect(await askResults(odd)).to.equal(null);
      expect(b.submitted).to.deep.equal([]);
      expect(a.engine.results).to.deep.equal([]);
      expect((await runsOnB(a, b)).record.node).to.equal('b');
    });
  });

  it('the same run delivered twice to a node runs once: while it runs, while its result waits, and after', async () => {
    const w = cluster();
    const b = await w.node('b', { tags: ['gpu'] });
    const leaderless = await connectNats(nats.urls);
    const parts: WireParts = { nc: leaderless, keys: testKeys, cluster: w.name, log: silentLogger() };
    const exec = execution('job-twice');
    const run = () => ask(parts, execSubject(w.name, 'b'), w.addressOf('b'), EXEC_CONTEXT, { op: 'run', execs: [exec, exec] }, 2_000);
    expect(await run()).to.deep.equal({ taken: 1 });
    expect(await run()).to.deep.equal({ taken: 0 });
    b.placement.executor.push(exec.jobId, exec.attempt, true, finished());
    expect(await run()).to.deep.equal({ taken: 0 }); // its result waits for a leader
    const a = await w.node('a');
    a.engine.adoptable.add(exec.attempt);
    await w.leader(a);
    await waitFor(() => a.engine.results.length === 1, 5_000, 'the result at a');
    // b lets the result go when a's answer reaches it, after a has taken it: not at once.
    await waitFor(() => b.placement.executor.held().length === 0, 5_000, 'the result let go at b');
    expect(await run()).to.deep.equal({ taken: 0 });
    expect(b.submitted).to.deep.equal([exec]);
  });
});
