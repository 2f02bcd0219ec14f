// A record a foreign message pushed out of the stream, known for sure only to a leader whose
// tenure ended before it could write it again (tickd(8) SECURITY, Quarantine): the leader owes
// it, says so in its report, and whichever node leads next writes that record, not its own
// copy's (a follower behind the leader never saw the record's last write; a copy rebuilt
// while the foreign message was there has none).
//
// The follower is made to fall behind for sure: paused while the leader writes more than its
// consumer's pull holds, then the last write of j.1 is pushed out before it reads it. The
// leader is paused past the lease's TTL right after that write and the foreign message, so it
// neither notices the message nor may write when it resumes.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { ClusterKeys } from '../../lib/jetstream/cluster-keys.ts';
import { Members } from '../../lib/jetstream/members.ts';
import type { Claim } from '../../lib/jetstream/owed-claims.ts';
import { openRecord } from '../../lib/jetstream/record-seal.ts';
import { silentLogger } from '../../lib/log.ts';
import { clusterSubjects } from '../../lib/jetstream/subjects.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { testKeys } from '../helpers/cluster-secret.ts';
import { startNode, waitForLeader } from '../helpers/cluster-nodes.ts';
import type { Daemon } from '../helpers/daemon.ts';
import { closeNatsClients, connectNats, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { pause } from '../helpers/procfs.ts';

const NAME = 'owed';
const V1 = '4000000000000000001';
const V2 = '4000000000000000002';
/** More than a follower's consumer pulls at once (lib/jetstream/tail.ts). */
const FILLER = 2_000;

describe('cluster mode: what a foreign message pushed out, owed by a leader whose tenure ended', function () {
  this.timeout(180_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  const nodes: Daemon[] = [];
  const clients: LineClient[] = [];
  before(function () { bin = requireNatsServer(this); });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const d of nodes.splice(0)) {
      if (d.proc.exitCode === null) d.proc.kill('SIGCONT');
      await d.kill();
    }
    await closeNatsClients();
    await nats?.stop();
    nats = null;
  });
  const client = async (d: Daemon): Promise<LineClient> => {
    const c = await LineClient.connect(d.tcp);
    clients.push(c);
    return c;
  };

  it('the next leader writes the record as the ended tenure knew it, not as its own copy behind it has it', async () => {
    nats = await startNats(bin, 1);
    const leader = await startNode(nats, { cluster: NAME, name: 'a', ttl: '2s' });
    nodes.push(leader);
    await waitForLeader([leader], 30_000);
    const follower = await startNode(nats, { cluster: NAME, name: 'b', ttl: '2s' });
    nodes.push(follower);
    const c = await client(leader);
    expect(await c.request('s1', `SET j.1 ${V1}`, 10_000)).to.deep.equal(['s1 OK']);

    const nc = await connectNats(nats.urls);
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const reports = await new Kvm(nc).open(`${NAME}-nodes`);
    const report = async (node: string): Promise<Record<string, unknown> | null> => {
      const e = await reports.get(node);
      return e === null || e.operation !== 'PUT' ? null : (JSON.parse(e.string()) as Record<string, unknown>);
    };
    const last = async (): Promise<number> => (await jsm.streams.info(NAME)).state.last_seq;
    const upTo = await last();
    await waitFor(async () => Number((await report('b'))?.['applied']) >= upTo, 20_000, 'the follower to apply j.1');

    // The follower falls behind: its consumer's pull is used up while it is paused.
    await pause(follower.proc.pid!);
    c.write(Array.from({ length: FILLER }, (_, k) => `f${k} SET fill.${k} ${V1}\n`).join(''));
    for (let k = 0; k < FILLER; k++) expect(await c.collect(`f${k}`, 30_000)).to.deep.equal([`f${k} OK`]);
    expect(await c.request('s2', `SET j.1 ${V2}`, 10_000)).to.deep.equal(['s2 OK']);
    // The leader pauses before it can notice the foreign message that pushes that write out.
    await pause(leader.proc.pid!);
    const subject = clusterSubjects(NAME).job('j.1');
    const junkSeq = (await js.publish(subject, randomBytes(40))).seq;
    // Past the TTL: when it resumes, its own clock says the lease ran out; it may not write. A
    // foreign value holds the lease meanwhile, so that it cannot take it again and write the
    // record itself: the follower must.
    const lease = await new Kvm(nc).open(`${NAME}-lease`);
    await waitFor(async () => (await lease.get('leader'))?.operation !== 'PUT', 20_000, 'the paused leader\'s lease to expire');
    const holdLease = setInterval(() => void lease.put('leader', 'not a node').catch(() => {}), 300);
    try {
      await lease.put('leader', 'not a node');
      const replays = leader.stderr.filter((l) => l.includes('"msg":"stream replayed"')).length;
      leader.proc.kill('SIGCONT');
      // Stepped down and rebuilt its copy: a report stored after that says what it owes.
      await waitFor(() => leader.stderr.filter((l) => l.includes('"msg":"stream replayed"')).length > replays, 20_000, 'the old leader to rebuild its copy');
      const revision = (await reports.get('a'))?.revision ?? 0;
      await waitFor(async () => ((await reports.get('a'))?.revision ?? 0) > revision, 10_000, 'a report of the old leader\'s after its copy was rebuilt');
      await pause(leader.proc.pid!);
    } finally {
      clearInterval(holdLease);
    }
    follower.proc.kill('SIGCONT');
    expect(await waitForLeader(nodes.filter((d) => d !== leader), 30_000)).to.equal(follower);
    leader.proc.kill('SIGCONT');
    await waitForLeader(nodes, 30_000);
    for (const d of nodes) {
      const cd = await client(d);
      await waitFor(async () => {
        const q = await cd.request('q', 'QUERY j.', 10_000);
        return q[0] === `q j.1 planned ${V2}`;
      }, 30_000, `j.1 at its last acknowledged time through ${d === leader ? 'the old leader' : 'the follower'}`);
    }
    const m = await jsm.streams.getMessage(NAME, { last_by_subj: subject });
    const body = Buffer.from(m!.data);
    expect(m!.seq).to.be.greaterThan(junkSeq);
    expect(typeof openRecord(testKeys, NAME, subject, m!.seq, body, 0, body.length)).to.equal('number');
  });

  it('a report says what its node owes, sealed: another node reads it; an altered or foreign one is not taken', async () => {
    nats = await startNats(bin, 1);
    const nc = await connectNats(nats.urls);
    const a = await Members.open(nc, 'ow', 'a', 1, testKeys, silentLogger());
    const b = await Members.open(nc, 'ow', 'b', 1, testKeys, silentLogger());
    try {
      const claims: Claim[] = [{ seq: 7, subject: 'ow.j.x', owed: { t: 'job', job: { id: 'x', execution: 5n, status: 'planned' } }, certain: true }];
      expect(await a.store('follower', 3, claims)).to.equal(true);
      await waitFor(() => b.othersOwe().length === 1, 10_000, 'b to read what a owes');
      expect(b.othersOwe()).to.deep.equal(claims);
      expect(a.othersOwe()).to.deep.equal([]); // its own are not another node's
      const kv = await new Kvm(nc).open('ow-nodes');
      const real = JSON.parse((await kv.get('a'))!.string()) as Record<string, unknown>;
      // The same report, what it owes changed: the report is taken, what it owes is not.
      const altered = (real['owed'] as string).replace('"ow.j.x"', '"ow.j.y"');
      await kv.put('a', JSON.stringify({ ...real, owed: altered, applied: 3 }));
      await waitFor(() => b.othersOwe().length === 0, 10_000, 'b to drop the altered claim');
      expect(b.list(3).map((m) => m.name)).to.deep.equal(['a']);
      // Sealed with another secret: not taken either.
      const other = await Members.open(nc, 'ow', 'a', 1, new ClusterKeys(['another-secret-0123456789abcdef0123456789']), silentLogger());
      await other.store('follower', 4, claims);
      await waitFor(async () => JSON.parse((await kv.get('a'))!.string())['applied'] === 4, 10_000, 'the foreign report stored');
      expect(b.othersOwe()).to.deep.equal([]);
      await other.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
