// Cluster mode, a client's connection across a failover (tickd(8) CLUSTER MODE;
// lib/jetstream/forward-client.ts leaderChanged): a batch a node forwarded to a leader that
// then died is never answered, and a connection answers in order, so every later command of
// that connection used to wait behind it for the forward's whole answer wait (15 s), although
// a new leader served after about the TTL. Now each surviving node answers such a batch
// ERROR internal as soon as it learns the leader changed (it took the lease, or saw another
// node's), and the connection goes on.
//
// Three tickd nodes on a 3-server NATS cluster (real processes; never the server at 4222),
// lease TTL 2 s. Every node but the leader gets a connection pipelining SETs; the leader is
// killed (SIGKILL); each of those connections must acknowledge a SET sent after the leader
// was dead within TTL + 1 s of the kill, plus a margin for this shared 2-core machine (the
// TTL's expiry on the NATS server and the next node's try, every TTL/4, vary with the load).
import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import type { Address, Daemon } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { ledSince, startNode, waitForLeader } from '../helpers/cluster-nodes.ts';
import { closeNatsClients, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { pause } from '../helpers/procfs.ts';
import { prng } from '../helpers/prng.ts';

const TTL_MS = 2_000;
/** What the issue asks: every surviving node acknowledges again within TTL + 1 s of the kill. */
const WANTED_MS = TTL_MS + 1_000;
/** Room for a loaded 2-core machine (other test runs share it). */
const MARGIN_MS = 1_000;
const ROUNDS = 3;
const DEPTH = 16;
const EXEC = '4000000000000000000';

interface Answer {
  readonly id: string;
  /** Date.now() when the SET was written and when its reply came. */
  readonly sentAt: number;
  readonly at: number;
  readonly reply: string;
}

/**
 * One connection pipelining `SET <prefix><n> EXEC`, DEPTH in flight, each reply (in order)
 * sending the next; every reply is kept with its times.
 */
class Pipeliner {
  readonly answers: Answer[] = [];
  private readonly sent = new Map<string, { id: string; at: number }>();
  private readonly socket: Socket;
  private readonly prefix: string;
  private running = true;
  private n = 0;
  private buf = '';
  readonly closed: Promise<void>;

  private constructor(socket: Socket, prefix: string) {
    this.socket = socket;
    this.prefix = prefix;
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    this.closed = new Promise((r) => socket.once('close', () => r()));
    socket.on('data', (chunk: string) => {
      this.buf += chunk;
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        const rid = line.slice(0, line.indexOf(' '));
        const w = this.sent.get(rid);
        if (w === undefined) continue;
        this.sent.delete(rid);
        this.answers.push({ id: w.id, sentAt: w.at, at: Date.now(), reply: line.slice(rid.length + 1) });
        if (this.running) this.send();
      }
    });
    for (let k = 0; k < DEPTH; k++) this.send();
  }

  static open(addr: Address, prefix: string): Promise<Pipeliner> {
    return new Promise((resolve, reject) => {
      const s = connect(addr.port, addr.host, () => resolve(new Pipeliner(s, prefix)));
      s.once('error', reject);
    });
  }

  private send(): void {
    const rid = `s${this.n}`;
    const id = `${this.prefix}${this.n++}`;
    this.sent.set(rid, { id, at: Date.now() });
    this.socket.write(`${rid} SET ${id} ${EXEC}\n`);
  }

  get acked(): string[] {
    return this.answers.filter((a) => a.reply === 'OK').map((a) => a.id);
  }

  /** The first reply OK to a SET written after `t`, or null. */
  firstOkSentAfter(t: number): Answer | null {
    return this.answers.find((a) => a.reply === 'OK' && a.sentAt > t) ?? null;
  }

  /** Stops sending; waits up to `graceMs` for the replies still due, then closes. */
  async stop(graceMs = 20_000): Promise<void> {
    this.running = false;
    await waitFor(() => this.sent.size === 0, graceMs, `${this.prefix}: the replies still due`).catch(() => {});
    this.socket.destroy();
    await this.closed;
  }
}

describe('cluster mode: a client of a surviving node after the leader dies', function () {
  this.timeout(300_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  const nodes: Daemon[] = [];
  const writers: Pipeliner[] = [];
  const clients: LineClient[] = [];
  before(function () { bin = requireNatsServer(this); });
  afterEach(async () => {
    for (const w of writers.splice(0)) await w.stop(0);
    for (const c of clients.splice(0)) c.close();
    for (const d of nodes.splice(0)) {
      d.proc.kill('SIGCONT');
      await d.kill();
    }
    await closeNatsClients();
    await nats?.stop();
    nats = null;
  });
  const live = () => nodes.filter((d) => d.proc.exitCode === null && d.proc.signalCode === null);
  const startCluster = async (cluster: string, ttl: string): Promise<void> => {
    nats = await startNats(bin, 3);
    nodes.push(...await Promise.all(['a', 'b', 'c'].map((n) => startNode(nats!, { cluster, name: `node-${n}`, ttl }))));
    await waitForLeader(nodes);
  };
  const listed = async (d: Daemon, prefix: string): Promise<Set<string>> => {
    const c = await LineClient.connect(d.tcp);
    clients.push(c);
    const out = await c.request('q', `QUERY ${prefix}`, 30_000);
    expect(out.at(-1)).to.equal('q OK');
    return new Set(out.slice(0, -1).map((l) => l.split(' ')[1]!));
  };

  it(`SIGKILL of the leader, ${ROUNDS} times: every surviving node's existing connection acknowledges SETs again within TTL + 1 s`, async () => {
    const rand = prng(20261201);
    await startCluster('stall', `${TTL_MS}ms`);
    const figures: string[] = [];
    const worst: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const leader = await waitForLeader(live());
      const others = live().filter((d) => d !== leader);
      const ws = await Promise.all(others.map((d, k) => Pipeliner.open(d.tcp, `st.${round}.${k}.`)));
      writers.push(...ws);
      await waitFor(() => ws.every((w) => w.acked.length >= 50), 20_000, 'SETs to flow through every follower');
      await new Promise((r) => setTimeout(r, 200 + Math.floor(rand() * 1_000)));
      const killAt = Date.now();
      await leader.kill();
      // Exited: a SET written from now on can only be answered by another leader.
      const deadAt = Date.now();
      await waitFor(() => ws.every((w) => w.firstOkSentAfter(deadAt) !== null), 30_000, `round ${round}: every follower's connection to acknowledge a SET again`);
      const next = await waitForLeader(live(), 10_000);
      const ms = ws.map((w) => w.firstOkSentAfter(deadAt)!.at - killAt);
      const led = ledSince(next)! - killAt;
      for (const w of ws) await w.stop();
      writers.splice(0);
      const errors = ws.flatMap((w) => w.answers.filter((a) => a.reply !== 'OK'));
      figures.push(`round ${round}: ${ms.map((m, k) => `${others[k] === next ? 'new leader' : 'follower'} +${m} ms`).join(', ')} ` +
        `(new leader at +${led} ms; ${errors.length} ERROR replies, ${ws.reduce((n, w) => n + w.acked.length, 0)} OK)`);
      worst.push(Math.max(...ms));
      // The batches held by the dead leader are answered ERROR internal (outcome unknown), after the
      // kill; nothing before it (a lease refresh ends no batch).
      expect(errors.filter((a) => a.reply !== 'ERROR internal').map((a) => a.reply), 'replies other than OK or ERROR internal').to.deep.equal([]);
      expect(errors.filter((a) => a.at < killAt).length, 'ERROR replies before the kill').to.equal(0);
      const present = await listed(next, `st.${round}.`);
      const acked = ws.flatMap((w) => w.acked);
      expect(acked.filter((id) => !present.has(id)), 'acknowledged SETs lost').to.deep.equal([]);
      nodes.push(await startNode(nats!, { cluster: 'stall', name: `node-back-${round}`, ttl: `${TTL_MS}ms` }));
    }
    console.log(`      kill -> first SET acknowledged on an existing connection, sent after the leader was dead:\n        ${figures.join('\n        ')}`);
    expect(Math.max(...worst), `ms from the kill (TTL ${TTL_MS} ms; wanted <= ${WANTED_MS}, + ${MARGIN_MS} for this machine)`).to.be.at.most(WANTED_MS + MARGIN_MS);
  });

  it('a leader merely slow (paused for less than the TTL) keeps the batches it holds: they are answered OK, none cut short', async () => {
    // TTL 5 s: the leader refreshed at most 5/3 s before the pause, so its claim outlasts a 1.5 s pause by 1.8 s.
    await startCluster('slow', '5s');
    const leader = await waitForLeader(nodes);
    const since = ledSince(leader);
    const others = nodes.filter((d) => d !== leader);
    const ws = await Promise.all(others.map((d, k) => Pipeliner.open(d.tcp, `sl.${k}.`)));
    writers.push(...ws);
    await waitFor(() => ws.every((w) => w.acked.length >= 50), 20_000, 'SETs to flow through every follower');
    await pause(leader.proc.pid!);
    const pausedAt = Date.now();
    await new Promise((r) => setTimeout(r, 1_500));
    leader.proc.kill('SIGCONT');
    const resumedAt = Date.now();
    // Past a few refreshes of the resumed leader.
    await waitFor(() => ws.every((w) => w.firstOkSentAfter(resumedAt + 3_000) !== null), 20_000, 'SETs to flow again');
    for (const w of ws) await w.stop();
    writers.splice(0);
    expect(ledSince(leader), 'the same leader throughout').to.equal(since);
    expect(ws.flatMap((w) => w.answers.filter((a) => a.reply !== 'OK').map((a) => a.reply)), 'replies other than OK').to.deep.equal([]);
    // The SETs in flight during the pause did wait for it.
    const waited = ws.flatMap((w) => w.answers.filter((a) => a.sentAt < pausedAt + 200 && a.at > resumedAt).map((a) => a.at - a.sentAt));
    expect(waited.length, 'SETs that waited for the paused leader').to.be.above(0);
    expect(Math.max(...waited)).to.be.at.least(1_000);
    const present = await listed(leader, 'sl.');
    expect(ws.flatMap((w) => w.acked).filter((id) => !present.has(id)), 'acknowledged SETs lost').to.deep.equal([]);
  });
});
