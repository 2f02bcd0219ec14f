// What etc/nats/nats-server.conf lets in (tickd(8) SECURITY), on three copies of it rewritten
// for loopback (test/helpers/nats.ts startSampleCluster) with TLS files made as its comment
// says and its placeholders replaced (a password for `tickd`, a bcrypt hash in double quotes
// for `monitor`): the user `tickd` does everything a tickd cluster named `tickd` does, through
// tickd's own code, without one permissions violation, but cannot purge or delete its
// stream; the user `monitor` reads the JetStream state but cannot publish to any of tickd's
// subjects, call the API that changes or reads them, or listen in on tickd's inbox, and
// nothing it tried reached a stream, a bucket or the leader; a client without credentials,
// with a wrong password or without TLS is refused; and a server whose certificate another
// authority signed does not join the cluster.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { connectCluster } from '../../lib/jetstream/connect.ts';
import { ensureStream, streamPeers } from '../../lib/jetstream/stream.ts';
import { clusterSubjects } from '../../lib/jetstream/subjects.ts';
import { forwardingSubject } from '../../lib/jetstream/forwarding.ts';
import { checkpointNames, ensureCheckpointStream } from '../../lib/jetstream/checkpoint.ts';
import { scanStream } from '../../lib/jetstream/wire/stream-scan.ts';
import { Members } from '../../lib/jetstream/members.ts';
import { leaseBucketName, openLeaseBucket } from '../../lib/lease/bucket.ts';
import { silentLogger } from '../../lib/log.ts';
import { waitFor } from '../helpers/client.ts';
import {
  closeNatsClients, connectNats, freePort, makeTlsFiles, requireNatsServer, rewriteConf, sampleOnLoopback, startSampleCluster,
  type SampleCluster, type TlsFiles,
} from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';
import { testKeys } from '../helpers/cluster-secret.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = readFileSync(join(ROOT, 'etc/nats/nats-server.conf'), 'utf8');
const CLUSTER = 'tickd';
const TICKD_PASSWORD = randomBytes(24).toString('hex');
// A test vector of bcrypt (OpenBSD's, as crypt_blowfish has it): "U*U" at cost 5.
const MONITOR_PASSWORD = 'U*U';
const MONITOR_HASH = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW';

/** Every permissions violation the server reported to a connection (its status errors). */
function violations(nc: NatsConnection): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'error' && /Permissions Violation/i.test(String(s.error?.message))) seen.push(s.error.message);
    }
  })();
  return seen;
}

/** How a request went: 'permissions' (refused by the server), 'no responders', or 'answered'. */
async function tryRequest(nc: NatsConnection, subject: string, data = '{}'): Promise<string> {
  try {
    await nc.request(subject, data, { timeout: 3_000 });
    return 'answered';
  } catch (err) {
    const text = `${(err as Error).name} ${(err as Error).message} ${String((err as { cause?: Error }).cause?.message ?? '')}`;
    if (/permission/i.test(text)) return 'permissions';
    if (/no responders|503/i.test(text)) return 'no responders';
    return text;
  }
}

describe('etc/nats/nats-server.conf: users, permissions, TLS', function () {
  this.timeout(120_000);
  let bin: string;
  let tls: TlsFiles;
  let cluster: SampleCluster;
  let tickd: NatsConnection;
  let tickdViolations: string[];

  before(async function () {
    bin = requireNatsServer(this);
    tls = makeTlsFiles();
    let sample = rewriteConf(SAMPLE, /password: "CHANGE-ME"/, `password: "${TICKD_PASSWORD}"`);
    sample = rewriteConf(sample, /password: "CHANGE-ME-TOO"/, `password: "${MONITOR_HASH}"`);
    cluster = await startSampleCluster(bin, sample, tls);
    // tickd's own connection: the user from the URL, TLS against the sample's CA.
    tickd = await connectCluster({
      urls: cluster.urls(`tickd:${TICKD_PASSWORD}`), credsFile: null, caFile: tls.ca, name: 'sample-tickd',
      log: silentLogger(), connectTimeoutMs: 10_000, allowUnauthenticatedNats: false,
    });
    tickdViolations = violations(tickd);
    // The cluster takes the tickd stream, 3 replicas, once its servers have elected their leaders.
    let last: unknown = null;
    await waitFor(async () => {
      try {
        return (await ensureStream(await jetstreamManager(tickd), clusterSubjects(CLUSTER), 3, silentLogger())).config.num_replicas === 3;
      } catch (err) {
        last = err;
        return false;
      }
    }, 60_000, 'the JetStream cluster to take the tickd stream').catch((err: Error) => {
      throw new Error(`${err.message} (last: ${String(last)}); the servers said:\n${cluster.logs.join('\n')}`);
    });
  });

  after(async () => {
    await tickd?.close();
    await closeNatsClients();
    await cluster?.stop();
  });

  it('lets the user tickd do what a tickd cluster does, and nothing is a permissions violation', async () => {
    const jsm = await jetstreamManager(tickd);
    const js = jetstream(tickd);
    const subjects = clusterSubjects(CLUSTER);
    // Records: published, read by sequence, by an ordered consumer, by the replay's bare connection, deleted.
    const ack = await js.publish(subjects.job('x'), 'record');
    expect(ack.stream).to.equal(CLUSTER);
    await js.publish('tickd.j.y', 'record');
    expect((await jsm.streams.getMessage(CLUSTER, { last_by_subj: 'tickd.j.x' }))?.seq).to.equal(ack.seq);
    const ordered = await js.consumers.get(CLUSTER);
    expect((await ordered.next({ expires: 5_000 }))?.subject).to.equal('tickd.j.x');
    const info = await jsm.streams.info(CLUSTER);
    let scanned = 0;
    await scanStream(tickd, jsm, { stream: CLUSTER, first: 1, last: info.state.last_seq, parts: 1, peers: streamPeers(info) }, () => { scanned++; });
    expect(scanned).to.equal(info.state.messages);
    await jsm.streams.deleteMessage(CLUSTER, ack.seq, false);
    // The checkpoint stream: made, written, purged.
    const cp = checkpointNames(CLUSTER);
    await ensureCheckpointStream(jsm, cp, 3);
    await js.publish(cp.chunk('c1', 0), 'chunk');
    await jsm.streams.purge(cp.stream, { filter: cp.allChunks });
    // Forwarding: nobody listens yet (no responders), then the "leader" answers.
    expect(await tryRequest(tickd, forwardingSubject(CLUSTER))).to.equal('no responders');
    const leader = await connectCluster({
      urls: cluster.urls(`tickd:${TICKD_PASSWORD}`), credsFile: null, caFile: tls.ca, name: 'sample-leader',
      log: silentLogger(), connectTimeoutMs: 10_000, allowUnauthenticatedNats: false,
    });
    const leaderViolations = violations(leader);
    try {
      leader.subscribe(forwardingSubject(CLUSTER), { callback: (_e, m: Msg) => { m.respond('done'); } });
      await leader.flush();
      // The subscription's interest reaches the other servers of the NATS cluster a moment later.
      const answered = async (): Promise<boolean> => (await tickd.request(forwardingSubject(CLUSTER), 'batch', { timeout: 5_000 }).then((m) => m.string(), () => null)) === 'done';
      await waitFor(answered, 10_000, 'the leader\'s answer on the forwarding subject');
    } finally {
      await leader.close();
    }
    expect(leaderViolations).to.deep.equal([]);
    // The lease bucket: made with replicas and TTL, its key created, updated, read, deleted.
    const lease = await openLeaseBucket(tickd, CLUSTER, 3_000, 3);
    const rev = await lease.create('leader', '{"node":"a"}');
    const rev2 = await lease.update('leader', '{"node":"a"}', rev);
    expect((await lease.get('leader'))?.revision).to.equal(rev2);
    await lease.delete('leader', { previousSeq: rev2 });
    // The nodes bucket, watched.
    const members = await Members.open(tickd, CLUSTER, 'n-a', 3, testKeys, silentLogger());
    try {
      expect(await members.store('leader', 1)).to.equal(true);
      await waitFor(() => members.list(1).some((m) => m.name === 'n-a'), 10_000, 'the watch to see the report');
    } finally {
      await members.close();
    }
    await tickd.flush();
    expect(tickdViolations).to.deep.equal([]);
  });

  it('does not let the user tickd purge or delete its stream', async () => {
    const own = await connectNats(cluster.urls().join(','), { user: 'tickd', pass: TICKD_PASSWORD, tls: { caFile: tls.ca } });
    const before = (await (await jetstreamManager(tickd)).streams.info(CLUSTER)).state;
    expect(await tryRequest(own, `$JS.API.STREAM.PURGE.${CLUSTER}`)).to.equal('permissions');
    expect(await tryRequest(own, `$JS.API.STREAM.DELETE.${CLUSTER}`)).to.equal('permissions');
    expect(await tryRequest(own, '$JS.API.STREAM.CREATE.other')).to.equal('permissions');
    expect((await (await jetstreamManager(tickd)).streams.info(CLUSTER)).state).to.deep.include({ messages: before.messages, last_seq: before.last_seq });
  });

  it('lets the user monitor look, and nothing it publishes reaches tickd', async () => {
    const monitor = await connectNats(cluster.urls().join(','), {
      user: 'monitor', pass: MONITOR_PASSWORD, tls: { caFile: tls.ca }, inboxPrefix: '_INBOX_monitor',
    });
    const refused = violations(monitor);
    const tickdJsm = await jetstreamManager(tickd);
    const lease = await openLeaseBucket(tickd, CLUSTER, 3_000, 3);
    const leaseRev = await lease.create('leader', '{"node":"a"}');
    // What reaches the leader: a listener on the forwarding subject.
    const forwarded: string[] = [];
    const listener = tickd.subscribe(forwardingSubject(CLUSTER), { callback: (_e, m: Msg) => { forwarded.push(m.string()); m.respond('done'); } });
    await tickd.flush();
    try {
      // It reads the JetStream state.
      const jsm = await jetstreamManager(monitor);
      const before = (await jsm.streams.info(CLUSTER)).state;
      // Publishing to tickd's subjects is refused.
      for (const subject of ['tickd.j.x', 'tickd.r.y', 'tickd-checkpoint.head', `$KV.${leaseBucketName(CLUSTER)}.leader`, '$KV.tickd-nodes.n-a']) {
        monitor.publish(subject, 'evil');
      }
      expect(await tryRequest(monitor, forwardingSubject(CLUSTER), 'evil')).to.equal('permissions');
      // So is the API that changes tickd's streams or reads their records.
      for (const api of [`STREAM.PURGE.${CLUSTER}`, `STREAM.DELETE.${CLUSTER}`, `STREAM.UPDATE.${CLUSTER}`, `STREAM.MSG.DELETE.${CLUSTER}`,
        `STREAM.MSG.GET.${CLUSTER}`, `CONSUMER.CREATE.${CLUSTER}.spy`, `DIRECT.GET.KV_${leaseBucketName(CLUSTER)}`, 'STREAM.CREATE.evil']) {
        expect(await tryRequest(monitor, `$JS.API.${api}`), api).to.equal('permissions');
      }
      // And listening in on tickd: its inbox, its subjects.
      for (const subject of ['_INBOX.>', 'tickd.>', forwardingSubject(CLUSTER)]) monitor.subscribe(subject);
      await monitor.flush();
      await waitFor(() => refused.length >= 10, 10_000, 'the server to refuse every publish and subscription');
      for (const subject of ['tickd.j.x', 'tickd-checkpoint.head', '$KV.tickd-lease.leader', '_INBOX.>', 'tickd.>']) {
        expect(refused.some((r) => r.includes(`"${subject}"`)), `refused: ${subject}\n${refused.join('\n')}`).to.equal(true);
      }
      // Nothing arrived: the stream, the lease and the leader saw none of it.
      expect((await tickdJsm.streams.info(CLUSTER)).state).to.deep.include({ messages: before.messages, last_seq: before.last_seq });
      expect((await lease.get('leader'))?.revision).to.equal(leaseRev);
      expect(forwarded).to.deep.equal([]);
    } finally {
      listener.unsubscribe();
      await lease.delete('leader');
    }
  });

  it('refuses a client without credentials, with a wrong password, or without TLS', async () => {
    const servers = cluster.urls();
    const refusal = (o: Parameters<typeof connect>[0]) => connect({ servers, reconnect: false, timeout: 5_000, ...o }).then(
      async (nc) => { await nc.close(); return 'connected'; }, (err: Error) => err.name);
    expect(await refusal({ tls: { caFile: tls.ca } })).to.equal('AuthorizationError');
    expect(await refusal({ tls: { caFile: tls.ca }, user: 'tickd', pass: 'guess' })).to.equal('AuthorizationError');
    expect(await refusal({ tls: { caFile: tls.ca }, user: 'monitor', pass: MONITOR_HASH })).to.equal('AuthorizationError');
    // tickd's own way in says so at start-up.
    const err = await connectCluster({
      urls: cluster.urls(), credsFile: null, caFile: tls.ca, name: 'sample-anonymous', log: silentLogger(), connectTimeoutMs: 5_000, allowUnauthenticatedNats: false,
    }).then(() => null, (e: Error) => e);
    expect(err?.message).to.match(/^cannot connect to NATS at tls:\/\/127\.0\.0\.1:\d+.*Authorization Violation/);
    // Without TLS: the server's INFO says it requires TLS and a login, and a plaintext login
    // (with the right password) is taken for a broken TLS handshake: the connection is closed.
    const plain = await new Promise<{ info: Record<string, unknown>; rest: string }>((resolve, reject) => {
      const s = netConnect(cluster.clientPorts[0]!, '127.0.0.1');
      let text = '';
      s.setEncoding('utf8');
      s.on('data', (c: string) => {
        if (text === '' || !text.includes('\r\n')) {
          text += c;
          if (text.includes('\r\n')) s.write(`CONNECT ${JSON.stringify({ user: 'tickd', pass: TICKD_PASSWORD, verbose: false })}\r\nPING\r\n`);
        } else {
          text += c;
        }
      });
      s.on('close', () => resolve({ info: JSON.parse(text.slice(5, text.indexOf('\r\n'))) as Record<string, unknown>, rest: text.slice(text.indexOf('\r\n') + 2) }));
      s.on('error', reject);
    });
    expect(plain.info).to.deep.include({ tls_required: true, auth_required: true });
    expect(plain.rest).to.not.match(/PONG|\+OK/);
  });

  it('lets no server whose certificate another authority signed join the cluster', async () => {
    const rogue = makeTlsFiles(tempDir('tickd-nats-rogue-'), 'rogue CA');
    const [client, route, http] = await Promise.all([freePort(), freePort(), freePort()]);
    // The sample as a server would run it with the rogue's certificate, routed to n2 and n3.
    const layout = { dir: tempDir('tickd-nats-rogue-'), clientPorts: [client], routePorts: [route, ...cluster.routePorts.slice(1)], tls: rogue };
    let conf = rewriteConf(sampleOnLoopback(SAMPLE, 0, layout), /^server_name: n1$/m, `server_name: rogue\nhttp: 127.0.0.1:${http}`);
    conf = rewriteConf(conf, /password: "CHANGE-ME"/, `password: "${TICKD_PASSWORD}"`);
    const file = join(rogue.dir, 'rogue.conf');
    writeFileSync(file, conf);
    const proc = spawn(bin, ['-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (c: string) => { log += c; });
    try {
      // It tries every route; each handshake fails on the certificates, both ways.
      await waitFor(() => (log.match(/TLS route handshake error/g) ?? []).length >= 2, 20_000, 'the rogue\'s route handshakes to fail');
      const routez = await (await fetch(`http://127.0.0.1:${http}/routez`)).json() as { num_routes: number };
      expect(routez.num_routes, log).to.equal(0);
      expect(cluster.logs.join('\n')).to.match(/certificate/);
    } finally {
      proc.kill('SIGKILL');
    }
  });
});
