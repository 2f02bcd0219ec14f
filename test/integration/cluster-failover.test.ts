// Cluster mode, part 2 (tickd(8) CLUSTER MODE): three tickd nodes on a 3-server NATS cluster
// (real processes, started here; never the shared server at 4222). Every node serves clients,
// followers forward to the leader; a leader killed, paused, or stopped is replaced; a NATS
// server killed needs no failover; nothing acknowledged is lost, no due job is skipped.
import { expect } from 'chai';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, stat, waitFor } from '../helpers/client.ts';
import { ledSince, roleOf, Sink, startNode, waitForLeader } from '../helpers/cluster-nodes.ts';
import { closeNatsClients, connectNats, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { pause } from '../helpers/procfs.ts';
import { openLeaseBucket } from '../../lib/lease/lease.ts';
import { prng } from '../helpers/prng.ts';

const TTL_MS = 3_000;
const CHAOS_ROUNDS = 10;

async function ok(c: LineClient, rid: string, rest: string): Promise<void> {
  expect(await c.request(rid, rest, 30_000)).to.deep.equal([`${rid} OK`]);
}

async function listed(c: LineClient, prefix: string): Promise<Set<string>> {
  const out = await c.request('q', `QUERY ${prefix}`, 30_000);
  expect(out.at(-1)).to.equal('q OK');
  return new Set(out.slice(0, -1).map((l) => l.split(' ')[1]!));
}

/**
 * Streams SETs (`<prefix><k>`, far in the future) through one connection, `depth` in flight,
 * until stopped; keeps every id answered OK. A closed connection (its node killed) ends it.
 */
class Writer {
  readonly acked: string[] = [];
  private stopped = false;
  readonly done: Promise<void>;

  constructor(c: LineClient, prefix: string, depth = 8) {
    this.done = Promise.all(Array.from({ length: depth }, async (_, lane) => {
      for (let k = lane; !this.stopped && !c.closed; k += depth) {
        const id = `${prefix}${k}`;
        const rid = `w${k}`;
        let reply: string[];
        try {
          reply = await c.request(rid, `SET ${id} 4000000000000000000`, 30_000);
        } catch {
          return; // the connection closed
        }
        if (reply[0] === `${rid} OK`) this.acked.push(id);
      }
    })).then(() => {});
  }

  stop(): Promise<void> {
    this.stopped = true;
    return this.done;
  }
}

describe('cluster mode: several nodes, one leader, failover', function () {
  this.timeout(600_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  const nodes: Daemon[] = [];
  const clients: LineClient[] = [];
  let sink: Sink;
  let hook = '';
  before(function () { bin = requireNatsServer(this); });
  beforeEach(async () => {
    sink = new Sink();
    hook = await sink.listen();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const d of nodes.splice(0)) {
      d.proc.kill('SIGCONT');
      await d.kill();
    }
    await closeNatsClients();
    await nats?.stop();
    nats = null;
    await sink.close();
  });
  const client = async (d: Daemon): Promise<LineClient> => {
    const c = await LineClient.connect(d.tcp);
    clients.push(c);
    return c;
  };
  const startCluster = async (cluster: string, ttl = '3s'): Promise<Daemon[]> => {
    nats = await startNats(bin, 3);
    const started = await Promise.all(['a', 'b', 'c'].map((n) => startNode(nats!, { cluster, name: `node-${n}`, ttl })));
    nodes.push(...started);
    await waitForLeader(started);
    return started;
  };
  const live = () => nodes.filter((d) => d.proc.exitCode === null && d.proc.signalCode === null);

  it('every node serves clients: a follower forwards writes and reads to the leader, STAT is the leader\'s', async () => {
    const all = await startCluster('fw');
    const leader = await waitForLeader(all);
    const follower = all.find((d) => d !== leader)!;
    const cf = await client(follower);
    await ok(cf, 's1', 'SET fw.one 4000000000000000000');
    expect(await cf.request('g', 'GET fw.one')).to.deep.equal(['g OK planned 4000000000000000000']);
    const cl = await client(leader);
    expect(await cl.request('g', 'GET fw.one')).to.deep.equal(['g OK planned 4000000000000000000']);
    await ok(cf, 'r', `RULE SET fw.rule fw. http POST ${hook}`);
    await ok(cf, 's2', `SET fw.due ${nowNs() + 200_000_000n}`);
    await waitFor(() => sink.fired.some((f) => f.id === 'fw.due'), 10_000, 'fw.due to fire');
    expect((await stat(cf)).get('jobs_total')).to.equal((await stat(cl)).get('jobs_total'));
    expect((await stat(cf)).get('persistence')).to.equal('jetstream');
    expect((await cf.request('x', 'REMOVE fw.nothing'))[0]).to.match(/^x ERROR not_found /);
    // Only the leader fires: nothing in the followers' logs says a job was dispatched.
    expect(roleOf(follower)).to.equal('follower');
  });

  it(`SIGKILL of the leader at a random moment, ${CHAOS_ROUNDS} times: nothing acknowledged lost, every due job fired, a new leader within TTL + 2 s`, async () => {
    const rand = prng(20261123);
    await startCluster('chaos');
    const setup = await client(live()[0]!);
    await ok(setup, 'r', `RULE SET chaos.rule due. http POST ${hook}`);
    const failovers: number[] = [];
    for (let round = 0; round < CHAOS_ROUNDS; round++) {
      const leader = await waitForLeader(live());
      const follower = live().find((d) => d !== leader)!;
      const [cl, cf] = [await client(leader), await client(follower)];
      // Jobs due every 5 ms across the kill, set (and acknowledged) before it.
      const first = nowNs() + 300_000_000n;
      const due: string[] = [];
      const batch: string[] = [];
      for (let k = 0; k < 400; k++) {
        const id = `due.${round}.${k}`;
        due.push(id);
        batch.push(`d${k} SET ${id} ${first + BigInt(k) * 5_000_000n}\n`);
      }
      cf.write(batch.join(''));
      for (let k = 0; k < 400; k++) expect(await cf.collect(`d${k}`, 30_000)).to.deep.equal([`d${k} OK`]);
      const writers = [new Writer(cl, `w.${round}.l.`), new Writer(cf, `w.${round}.f.`)];
      await new Promise((r) => setTimeout(r, 200 + Math.floor(rand() * 1_300)));
      const killAt = Date.now();
      await leader.kill();
      // kill() returns before the signal takes effect: on a loaded machine the leader went on
      // for tens of ms. Dead once its exit is seen.
      const deadAt = Date.now();
      const next = await waitForLeader(live(), TTL_MS + 10_000);
      await waitFor(() => due.every((id) => sink.counts().has(id)), 30_000, `round ${round}: every due job to fire`);
      const firstAfter = sink.fired.find((f) => f.at > killAt + 50);
      expect(firstAfter, 'a job fired after the kill').to.not.equal(undefined);
      failovers.push(firstAfter!.at - killAt);
      for (const w of writers) await w.stop();
      const check = await client(next);
      const present = await listed(check, `w.${round}.`);
      const acked = writers.flatMap((w) => w.acked);
      expect(acked.length, 'writes were acknowledged').to.be.above(0);
      expect(acked.filter((id) => !present.has(id)), 'acknowledged SETs lost').to.deep.equal([]);
      // A job fired twice was in flight at the kill: first fired before the leader was dead
      // (requests its runner child had sent by then arrive within 100 ms: 51 ms was seen on a
      // loaded CI machine; a new leader fires only after the TTL, seconds later).
      const counts = sink.counts();
      for (const id of due.filter((d) => (counts.get(d) ?? 0) > 1)) {
        const firstFired = sink.fired.find((f) => f.id === id)!;
        expect(firstFired.at, `${id} fired twice`).to.be.at.most(deadAt + 100);
      }
      // The killed node comes back as a follower for the next round.
      const back = await startNode(nats!, { cluster: 'chaos', name: `node-back-${round}` });
      nodes.push(back);
      expect(roleOf(back)).to.equal('follower');
    }
    failovers.sort((a, b) => a - b);
    console.log(`      failover (kill -> first job fired by the new leader), ms: p50 ${failovers[failovers.length >> 1]}, max ${failovers.at(-1)}`);
    expect(failovers.at(-1)!).to.be.below(TTL_MS + 2_000);
  });

  it('a leader paused past the TTL (SIGSTOP, then SIGCONT) writes nothing and fires nothing after it resumes', async () => {
    const all = await startCluster('pause');
    const leader = await waitForLeader(all);
    const cl = await client(leader);
    await ok(cl, 'r', `RULE SET pause.rule p. http POST ${hook}`);
    // Due while the leader is paused: fired by the new leader, exactly once. Due 3 s from now:
    // the 100 SETs before the pause took up to 1.8 s under the whole suite's load, once 3.6 s;
    // a job due before the pause (and 500 ms after: in flight at it) may have run on the old
    // leader and runs again (at least once, as documented): only the others are counted once.
    const first = nowNs() + 3_000_000_000n;
    const dueAt = (k: number): bigint => first + BigInt(k) * 20_000_000n;
    const due = Array.from({ length: 100 }, (_, k) => `p.${k}`);
    for (const [k, id] of due.entries()) await ok(cl, `d${k}`, `SET ${id} ${dueAt(k)}`);
    const holder = leader.stderr.find((l) => l.includes('"msg":"role changed: leader"'));
    expect(holder).to.not.equal(undefined);
    const pausedAt = nowNs();
    await pause(leader.proc.pid!);
    const next = await waitForLeader(all.filter((d) => d !== leader), TTL_MS + 10_000);
    // Writes sent to the paused node meanwhile wait in its worker for its primary.
    cl.write(Array.from({ length: 50 }, (_, k) => `late${k} SET p.late.${k} 4000000000000000000\n`).join(''));
    await waitFor(() => due.every((id) => sink.counts().has(id)), 20_000, 'the due jobs to fire on the new leader');
    const promotedAt = Number(JSON.parse(next.stderr.find((l) => l.includes('"msg":"role changed: leader"'))!)['lastSeq']);
    leader.proc.kill('SIGCONT');
    await leader.waitForLog((r) => r['msg'] === 'role changed: follower', 10_000);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, k) => cl.collect(`late${k}`, 30_000)));
    // Each late write is answered (through the new leader, or ERROR internal), never lost silently.
    for (const a of answers) expect(a[0]).to.match(/^late\d+ (OK|ERROR internal)$/);
    // Nothing the old leader wrote lands after the new leader started writing.
    const nc = await connectNats(nats!.urls);
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info('pause');
    const oldWriter = new Set<string>();
    const consumer = await jetstream(nc).consumers.get('pause');
    const msgs = await consumer.fetch({ max_messages: state.messages, expires: 5_000 });
    for await (const m of msgs) {
      const id = m.headers?.get('Nats-Msg-Id') ?? '';
      if (id.startsWith(`node-${leader === all[0] ? 'a' : leader === all[1] ? 'b' : 'c'}/`) && m.seq > promotedAt) oldWriter.add(`${m.seq} ${id}`);
      if (m.info.pending === 0) break;
    }
    expect([...oldWriter]).to.deep.equal([]);
    const counts = sink.counts();
    const whilePaused = due.filter((_, k) => dueAt(k) > pausedAt + 500_000_000n);
    expect(whilePaused.length, 'jobs due while the leader was paused').to.be.greaterThan(20);
    expect(whilePaused.filter((id) => counts.get(id) !== 1), 'jobs due while paused fired other than once').to.deep.equal([]);
    expect(due.filter((id) => (counts.get(id) ?? 0) < 1), 'due jobs never fired').to.deep.equal([]);
  });

  it('SIGKILL of one NATS server (not the lease bucket\'s leader): no failover, nothing acknowledged lost', async () => {
    const all = await startCluster('natskill');
    const leader = await waitForLeader(all);
    const since = ledSince(leader);
    const cf = await client(all.find((d) => d !== leader)!);
    const w = new Writer(cf, 'nk.', 16);
    await waitFor(() => w.acked.length > 200, 20_000, 'writes to flow');
    // Losing the server that leads the lease bucket costs a failover whenever NATS takes longer
    // than the lease TTL to elect the bucket's next leader (the key then expires: tickd(8),
    // What a failover costs). Any other server's loss must cost nothing.
    const jsm = await jetstreamManager(await connectNats(nats!.urls));
    const bucketLeader = (await jsm.streams.info('KV_natskill-lease')).cluster?.leader;
    const victim = nats!.servers.find((s) => s.name !== bucketLeader)!;
    await victim.kill();
    const before = w.acked.length;
    await waitFor(() => w.acked.length > before + 300, 30_000, 'writes to go on');
    await w.stop();
    expect(ledSince(leader)).to.equal(since);
    expect(all.filter((d) => roleOf(d) === 'leader')).to.deep.equal([leader]);
    const present = await listed(await client(leader), 'nk.');
    expect(w.acked.filter((id) => !present.has(id))).to.deep.equal([]);
  });

  it('SIGTERM of the leader hands over without waiting for the TTL', async () => {
    const all = await startCluster('handover', '10s');
    const leader = await waitForLeader(all);
    const c = await client(all.find((d) => d !== leader)!);
    await ok(c, 's', 'SET h.1 4000000000000000000');
    const stoppedAt = Date.now();
    expect((await leader.stop()).code).to.equal(0);
    const next = await waitForLeader(all.filter((d) => d !== leader), 10_000);
    expect(ledSince(next)! - stoppedAt, 'handover ms').to.be.below(5_000);
    expect(await c.request('g', 'GET h.1', 10_000)).to.deep.equal(['g OK planned 4000000000000000000']);
  });

  it('a follower stopped while the leader wrote thousands of records and removed jobs takes over with every acknowledged write and removal', async () => {
    nats = await startNats(bin, 3);
    // Checkpoints while node-b is stopped: the removals they cover may be deleted only once
    // node-b has applied them.
    const extra = ['--checkpoint-records', '100'];
    const first = await startNode(nats, { cluster: 'behind', name: 'node-a', extra });
    nodes.push(first);
    await waitForLeader([first]);
    const behind = await startNode(nats, { cluster: 'behind', name: 'node-b', extra });
    nodes.push(behind);
    const c = await client(first);
    await ok(c, 's0', 'SET before 4000000000000000000');
    const view = async (d: Daemon) => (await fetch(`http://${d.http!.host}:${d.http!.port}/cluster`)).json() as Promise<{ applied_seq: number }>;
    await waitFor(async () => (await view(behind)).applied_seq >= 1, 10_000, 'node-b to apply the first record');
    // More records than the follower's pull asks for at once, while it cannot ask again; the
    // removal is deleted from the stream behind them (nats-server 2.9 moved the consumers of
    // a stream past a purge, so a follower skipped everything up to it).
    await pause(behind.proc.pid!);
    const count = 5_000;
    let lines = '';
    for (let i = 0; i < count; i++) lines += `f${i} SET behind.${i} 4000000000000000000\n`;
    c.write(lines);
    for (let i = 0; i < count; i++) expect(await c.collect(`f${i}`, 30_000)).to.deep.equal([`f${i} OK`]);
    await ok(c, 's1', 'SET gone 4000000000000000000');
    await ok(c, 'r1', 'REMOVE gone');
    // node-b has applied this one's SET: its removal must stay in the stream until node-b has
    // applied it too, or node-b keeps the job (removal-deletions.ts).
    await ok(c, 'r0', 'REMOVE before');
    // Enough after them (a quarter of the state) for a checkpoint that covers both removals.
    const more = 2_500;
    lines = '';
    for (let i = 0; i < more; i++) lines += `m${i} SET behind.more.${i} 4000000000000000000\n`;
    c.write(lines);
    for (let i = 0; i < more; i++) expect(await c.collect(`m${i}`, 30_000)).to.deep.equal([`m${i} OK`]);
    // `before` (seq 1), the SETs, `gone`, its removal, the removal of `before`: count + 4.
    const covered = await first.waitForLog((r) => r['msg'] === 'checkpoint made' && Number(r['seq']) >= count + 4, 15_000);
    // Covered, yet kept while node-b has not applied it: past the 2 s hold and a sweep, the
    // removal of `before` is still in the stream (a wait for something that must not happen).
    await new Promise((r) => setTimeout(r, 2_600));
    const jsm = await jetstreamManager(await connectNats(nats.urls));
    expect(await jsm.streams.getMessage('behind', { seq: count + 4 }), `the removal of "before" (checkpoint ${String(covered['seq'])})`).to.not.equal(null);
    behind.proc.kill('SIGCONT');
    expect((await first.stop()).code).to.equal(0);
    await waitForLeader([behind], 20_000);
    const present = await listed(await client(behind), 'behind.');
    expect(present.size, 'acknowledged SETs on the new leader').to.equal(count + more);
    const c2 = await client(behind);
    expect(await c2.request('g', 'GET gone', 10_000)).to.deep.equal(['g ERROR not_found job "gone" does not exist']);
    expect(await c2.request('g', 'GET before', 10_000)).to.deep.equal(['g ERROR not_found job "before" does not exist']);
  });

  it('while no node can lead, a command waits a bounded time (longer than the TTL) and is answered ERROR internal', async () => {
    nats = await startNats(bin, 1);
    // Someone else holds the lease and keeps it alive: no tickd node can lead.
    const nc = await connectNats(nats.urls);
    const kv = await openLeaseBucket(nc, 'nolead', 1_000, 1);
    await kv.create('leader', JSON.stringify({ node: 'elsewhere', holder: 'elsewhere/1/x', token: 'x', acquiredAt: new Date().toISOString() }));
    const keep = setInterval(() => { void kv.put('leader', JSON.stringify({ node: 'elsewhere', holder: 'elsewhere/1/x', token: 'x', acquiredAt: '' })).catch(() => {}); }, 250);
    let c: LineClient;
    try {
      const d = await startNode(nats, { cluster: 'nolead', name: 'node-a', ttl: '1s' });
      nodes.push(d);
      c = await client(d);
      const sent = Date.now();
      expect(await c.request('s1', 'SET n.1 4000000000000000000', 30_000)).to.deep.equal(['s1 ERROR internal']);
      const waited = Date.now() - sent;
      expect(waited, 'waited longer than the TTL').to.be.above(1_000);
      expect(waited, 'a bounded wait').to.be.below(10_000);
      expect(roleOf(d)).to.equal('follower');
    } finally {
      clearInterval(keep);
    }
    // Once the key expires, the node takes it: commands go through.
    await waitFor(() => roleOf(nodes[0]!) === 'leader', 10_000, 'the node to lead');
    await ok(c, 's2', 'SET n.2 4000000000000000000');
  });
});
