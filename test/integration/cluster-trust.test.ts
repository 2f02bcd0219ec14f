// Cluster mode against a NATS peer that holds no cluster secret (tickd(8) SECURITY): what it
// publishes is never applied and never stops a node. The issue's own attack (a rule with a
// shell runner and a job for it, sent to the forwarding subject) runs nothing and is answered
// nothing; records published straight onto the stream (random bytes, an empty body, a
// well-formed but unsealed RULE SET, a real record copied to another subject) are quarantined
// by the replay, the tail and a restart, counted, named in a warning and by `tickd dump
// --cluster`, and deleted by the leader; the node keeps serving writes and a cold restart
// succeeds with every acknowledged write.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { jetstream, jetstreamManager, type JetStreamManager, type MsgRequest } from '@nats-io/jetstream';
import { openRecord } from '../../lib/jetstream/record-seal.ts';
import { clusterSubjects } from '../../lib/jetstream/subjects.ts';
import { forwardingSubject } from '../../lib/jetstream/forwarding.ts';
import { encodeRecord, FRAME_HEADER_BYTES } from '../../lib/logfile/codec.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { testKeys, testSecretFile } from '../helpers/cluster-secret.ts';
import { Daemon, runTickd } from '../helpers/daemon.ts';
import { closeNatsClients, connectNats, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';

const NAME = 'inj';

describe('cluster mode: a NATS peer without the cluster secret', function () {
  this.timeout(120_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  const daemons: Daemon[] = [];
  const clients: LineClient[] = [];
  before(function () { bin = requireNatsServer(this); });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const d of daemons.splice(0)) await d.kill();
    await closeNatsClients();
    await nats?.stop();
    nats = null;
  });

  const args = (n: NatsCluster): string[] => [
    '--cluster', n.urls, '--cluster-name', NAME, '--node-name', 'n1', '--cluster-replicas', '1', '--lease-ttl', '1s',
    '--cluster-secret-file', testSecretFile(),
  ];
  const start = async (n: NatsCluster, dir = tempDir()): Promise<Daemon> => {
    const d = await Daemon.start({ args: args(n), dir, readyTimeoutMs: 60_000 });
    daemons.push(d);
    await d.waitForLog((r) => r['msg'] === 'role changed: leader', 15_000);
    return d;
  };
  const client = async (d: Daemon): Promise<LineClient> => {
    const c = await LineClient.connect(d.tcp);
    clients.push(c);
    return c;
  };
  /** A SET acknowledged, trying again while the node steps down and back (a foreign write fences the leader). */
  const setEventually = async (c: LineClient, id: string): Promise<void> => {
    await waitFor(async () => (await c.request('s', `SET ${id} 4000000000000000000`, 10_000))[0] === 's OK', 20_000, `SET ${id} acknowledged`);
  };
  /** The sequences of the stream's messages whose seal does not verify. */
  const foreignIn = async (jsm: JetStreamManager): Promise<number[]> => {
    const out: number[] = [];
    const last = (await jsm.streams.info(NAME)).state.last_seq;
    for (let seq = 1; seq <= last; seq++) {
      const m = await jsm.streams.getMessage(NAME, { seq, next_by_subj: '>' } as unknown as MsgRequest).catch(() => null);
      if (m === null) break;
      seq = m.seq;
      const body = Buffer.from(m.data);
      if (typeof openRecord(testKeys, NAME, m.subject, m.seq, body, 0, body.length) === 'string') out.push(m.seq);
    }
    return out;
  };
  const quarantined = (d: Daemon): string[] => d.stderr.filter((l) => l.includes('"msg":"stream message quarantined: not a record of this cluster"'));

  it('runs nothing it is sent on the forwarding subject, and answers it nothing', async () => {
    nats = await startNats(bin, 1);
    const d = await start(nats);
    const c = await client(d);
    const marker = join(tempDir(), 'pwned');
    const nc = await connectNats(nats.urls);
    const subject = forwardingSubject(NAME);
    const evil = [
      serialize([{ op: 'rule.set', rule: { id: 'evil', pattern: 'evil.', runner: { type: 'shell', command: `touch ${marker}` } } }]),
      serialize([{ op: 'job.set', id: 'evil.1', execution: 1n }]),
      randomBytes(64),
      new Uint8Array(0),
    ];
    // The leader logs its role once it has subscribed, which its server may not have heard yet
    // (another connection): until it has, a request meets no responders, and is asked again.
    const ask = async (body: Uint8Array): Promise<Uint8Array> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          return (await nc.request(subject, body, { timeout: 5_000 })).data;
        } catch (err) {
          if (!/no responders/.test(String(err)) || Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    for (const body of evil) {
      // The leader answers a stranger's request with the empty end-of-answer message alone.
      expect((await ask(body)).length).to.equal(0);
    }
    expect((await c.request('l', 'LISTRULES', 10_000))).to.deep.equal(['l OK']);
    expect((await c.request('g', 'GET evil.1', 10_000))[0]).to.match(/^g ERROR not_found/);
    expect(existsSync(marker)).to.equal(false);
    await d.waitForLog((r) => r['msg'] === 'a message on the forwarding subject that is no node\'s batch: not run');
    await setEventually(c, 'after.forward');
  });

  it('a copy of a follower\'s batch, sent again to the next leader, does not run (batches are addressed to one tenure)', async () => {
    nats = await startNats(bin, 1);
    const leader = await start(nats);
    const follower = await Daemon.start({ args: args(nats).map((a) => (a === 'n1' ? 'n2' : a)), dir: tempDir(), readyTimeoutMs: 60_000 });
    daemons.push(follower);
    const c = await client(follower);
    // Every batch on the forwarding subject, as anyone who may subscribe to it sees them.
    const nc = await connectNats(nats.urls);
    const seen: Uint8Array[] = [];
    const sub = nc.subscribe(forwardingSubject(NAME), { callback: (_e, m) => { seen.push(m.data); } });
    await nc.flush();
    await setEventually(c, 'copy.1');
    const setBatch = seen.at(-1)!;
    expect((await c.request('r', 'REMOVE copy.1', 10_000))[0]).to.equal('r OK');
    sub.unsubscribe();
    // The leader dies; the follower takes over, with no memory of the nonces the old one ran.
    leader.proc.kill('SIGKILL');
    await follower.waitForLog((r) => r['msg'] === 'role changed: leader', 15_000);
    // Its subscription may reach the server a moment after it says it leads ("no responders").
    let answer: Uint8Array | null = null;
    await waitFor(async () => {
      answer = (await nc.request(forwardingSubject(NAME), setBatch, { timeout: 5_000 }).catch(() => null))?.data ?? null;
      return answer !== null;
    }, 10_000, 'the new leader answering on the forwarding subject');
    expect(answer!.length, 'a sealed redirect: addressed to the tenure before').to.be.greaterThan(0);
    expect((await c.request('g', 'GET copy.1', 10_000))[0]).to.match(/^g ERROR not_found/);
    // The follower's own batches still reach it (addressed anew after the redirect, or by the lease key).
    await setEventually(c, 'after.copy');
  });

  it('quarantines what it publishes on the stream, keeps serving, deletes it, and restarts cold with every acknowledged write', async () => {
    nats = await startNats(bin, 1);
    const dir = tempDir();
    let d = await start(nats, dir);
    let c = await client(d);
    await setEventually(c, 'kept.1');
    const nc = await connectNats(nats.urls);
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const subjects = clusterSubjects(NAME);
    const rule = encodeRecord({ t: 'rule', rule: { id: 'evil.', pattern: 'evil.', runner: { type: 'shell', command: 'true' } } }).subarray(FRAME_HEADER_BYTES);
    // A real record of this cluster, copied to another subject: its seal names the subject.
    const real = (await jsm.streams.getMessage(NAME, { last_by_subj: subjects.job('kept.1') }))!.data;
    const junk: Array<[string, Uint8Array]> = [
      [`${NAME}.j.garbage`, randomBytes(64)],
      [`${NAME}.j.empty`, new Uint8Array(0)],
      [subjects.rule('evil.'), rule],
      [subjects.job('copied'), real],
    ];
    for (const [subject, body] of junk) await js.publish(subject, body);
    // The leader's next write is refused for its expected sequence (someone else wrote): it
    // steps down, rebuilds its copy (quarantining the junk), leads again and serves.
    await setEventually(c, 'kept.2');
    await waitFor(() => quarantined(d).length >= junk.length, 20_000, 'the junk quarantined');
    expect(quarantined(d).map((l) => JSON.parse(l)['subject'] as string).sort()).to.include.members(junk.map(([s]) => s));
    expect(await c.request('l', 'LISTRULES', 10_000)).to.deep.equal(['l OK']);
    expect((await c.request('g', 'GET copied', 10_000))[0]).to.match(/^g ERROR not_found/);
    // Replaced or deleted by the leader: the stream holds tickd's own records only (the two
    // jobs, and a removal on each identifier's subject that held junk).
    await waitFor(async () => (await foreignIn(jsm)).length === 0, 20_000, 'the quarantined messages replaced or deleted');

    // Published while no node runs: listed by `tickd dump --cluster`, then quarantined by a cold start.
    expect((await d.stop()).code).to.equal(0);
    daemons.splice(0);
    await js.publish(`${NAME}.j.late`, Buffer.alloc(64, 0x61));
    const dump = await runTickd(['dump', '--cluster', nats.urls, '--cluster-name', NAME, '--cluster-secret-file', testSecretFile()]);
    expect(dump.code, dump.stderr).to.equal(0);
    expect(dump.stderr).to.match(new RegExp(`quarantined: message \\d+ \\(${NAME}\\.j\\.late\\): no tickd seal`));
    // The junk on identifiers' subjects was replaced by removals (restore.ts): deleted once a checkpoint covers them.
    expect(dump.stdout.split('\n').filter((l) => l !== '').sort()).to.deep.equal([
      'planned SET kept.1 4000000000000000000', 'planned SET kept.2 4000000000000000000',
      'removed REMOVE copied', 'removed REMOVE empty', 'removed REMOVE garbage', 'removed REMOVERULE evil.',
    ]);
    d = await start(nats, dir);
    c = await client(d);
    expect((await c.request('q', 'QUERY', 10_000)).map((l) => l.split(' ')[1]).sort()).to.deep.equal(['OK', 'kept.1', 'kept.2']);
    await waitFor(() => quarantined(d).length === 1, 10_000, 'the late junk quarantined at the start');
    await setEventually(c, 'kept.3');
  });

  it('puts back the live records a foreign message pushed out of the stream, with no client writing, and a cold start has them', async () => {
    nats = await startNats(bin, 1);
    const dir = tempDir();
    let d = await start(nats, dir);
    let c = await client(d);
    expect((await c.request('r', 'RULE SET live. live. shell true', 10_000))[0]).to.equal('r OK');
    await setEventually(c, 'live.1');
    await setEventually(c, 'gone.1');
    expect((await c.request('x', 'REMOVE gone.1', 10_000))[0]).to.equal('x OK');
    const nc = await connectNats(nats.urls);
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const subjects = clusterSubjects(NAME);
    // The stream keeps one message per subject: each of these replaces a record.
    for (const subject of [subjects.job('live.1'), subjects.rule('live.'), subjects.job('gone.1')]) await js.publish(subject, randomBytes(40));
    // The idle leader notices (no client writes), puts the records back from its copy and steps down and back.
    await d.waitForLog((r) => String(r['msg']).startsWith('records pushed out of the stream by foreign messages') && r['restored'] === 3, 20_000);
    await waitFor(async () => (await foreignIn(jsm)).length === 0, 20_000, 'the foreign messages replaced');
    // Nothing but the stream is left to read: every node gone, then a cold start.
    await d.kill();
    daemons.splice(0);
    d = await start(nats, dir);
    c = await client(d);
    expect(await c.request('q', 'QUERY live.', 10_000)).to.deep.equal(['q live.1 planned 4000000000000000000', 'q OK']);
    expect(await c.request('l', 'LISTRULES', 10_000)).to.deep.equal(['l live. live. shell true', 'l OK']);
    expect((await c.request('g', 'GET gone.1', 10_000))[0]).to.match(/^g ERROR not_found/);
  });

  it('tickd import --reseal moves an older tickd\'s unsealed stream to sealed records, keeping a backup', async () => {
    nats = await startNats(bin, 1);
    const nc = await connectNats(nats.urls);
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const subjects = clusterSubjects(NAME);
    await jsm.streams.add({ name: NAME, subjects: [subjects.all], max_msgs_per_subject: 1, num_replicas: 1 });
    // As an older tickd wrote them: bare payloads.
    const bare = (rec: Parameters<typeof encodeRecord>[0]) => encodeRecord(rec).subarray(FRAME_HEADER_BYTES);
    await js.publish(subjects.rule('old.'), bare({ t: 'rule', rule: { id: 'old.', pattern: 'old.', runner: { type: 'shell', command: 'true' } } }));
    await js.publish(subjects.job('old.1'), bare({ t: 'job', job: { id: 'old.1', execution: 4000000000000000000n, status: 'planned' } }));
    await js.publish(subjects.job('old.2'), bare({ t: 'job', job: { id: 'old.2', execution: 1n, status: 'executed' } }));
    await js.publish(`${NAME}.j.junk`, Buffer.alloc(3, 0x61));
    const backup = join(tempDir(), 'backup.log');
    const r = await runTickd(['import', '--reseal', backup, '--cluster', nats.urls, '--cluster-name', NAME, '--cluster-secret-file', testSecretFile()]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.match(/left out: message 4 \(inj\.j\.junk\)/);
    expect(r.stderr).to.match(/3 records of stream inj kept in /);
    expect(existsSync(backup)).to.equal(true);
    expect((await jsm.streams.info(NAME)).state.messages).to.equal(3);
    const again = await runTickd(['import', '--reseal', backup, '--cluster', nats.urls, '--cluster-name', NAME, '--cluster-secret-file', testSecretFile()]);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.match(/exists: --reseal writes a new backup there/);
    const d = await start(nats);
    const c = await client(d);
    expect((await c.request('q', 'QUERY', 10_000)).sort()).to.deep.equal(['q OK', 'q old.1 planned 4000000000000000000', 'q old.2 executed 1']);
    expect(await c.request('l', 'LISTRULES', 10_000)).to.deep.equal(['l old. old. shell true', 'l OK']);
    expect(quarantined(d)).to.deep.equal([]);
  });

  it('a node whose secret is not the cluster\'s verifies nothing and deletes nothing', async () => {
    nats = await startNats(bin, 1);
    const dir = tempDir();
    const d = await start(nats, dir);
    const c = await client(d);
    await setEventually(c, 'mine.1');
    expect((await d.stop()).code).to.equal(0);
    daemons.splice(0);
    const other = join(tempDir(), 'other.secret');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(other, `${'z'.repeat(40)}\n`, { mode: 0o600 });
    const wrong = await Daemon.start({ args: [...args(nats).slice(0, -1), other], dir: tempDir(), readyTimeoutMs: 60_000 });
    daemons.push(wrong);
    await wrong.waitForLog((r) => r['msg'] === 'role changed: leader', 15_000);
    await wrong.waitForLog((r) => String(r['msg']).includes('verified none of the stream\'s records'), 10_000);
    const nc = await connectNats(nats.urls);
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info(NAME)).state.messages).to.equal(1);
  });
});
