// The stream replay's bare connection (lib/jetstream/wire/connection.ts, wire/stream-scan.ts) against real
// nats-server processes, with every way the daemon may connect: user and password in the URL,
// a --cluster-creds credentials file (operator mode: JWTs made here, signed with nkeys), TLS
// with --cluster-ca. Each replays records published with and without headers, some deleted,
// exactly once, and leaves no consumer. A server lost in the middle of a read fails the read.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nkeys, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/client.ts';
import { makeCheckpoint } from '../../lib/jetstream/checkpoint-make.ts';
import { connectCluster } from '../../lib/jetstream/connect.ts';
import { replayStream } from '../../lib/jetstream/replay.ts';
import { StreamTail } from '../../lib/jetstream/tail.ts';
import { clusterSubjects } from '../../lib/jetstream/subjects.ts';
import { encodeRecord } from '../../lib/logfile/codec.ts';
import { sealRecord } from '../../lib/jetstream/record-seal.ts';
import { silentLogger } from '../../lib/log.ts';
import { testKeys, testSecretFile, testTrust } from '../helpers/cluster-secret.ts';

const tlsFile = (name: string) => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));

type KeyPair = ReturnType<typeof nkeys.createOperator>;

const b64url = (data: string | Uint8Array) => Buffer.from(data).toString('base64url');

/** A NATS JWT (v2) with `claims`, issued and signed by `issuer`. */
function jwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const body = `${b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))}.${b64url(JSON.stringify({
    jti: `${name}${Date.now()}`, iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), name, sub: subject, nats: { ...nats, version: 2 },
  }))}`;
  return `${body}.${b64url(issuer.sign(Buffer.from(body)))}`;
}

/** nats-server arguments for operator mode with one JetStream account, and a creds file of a user in it. */
function operatorMode(dir: string): { args: string[]; credsFile: string } {
  const operator = nkeys.createOperator();
  const account = nkeys.createAccount();
  const system = nkeys.createAccount();
  const user = nkeys.createUser();
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
  const accountJwt = jwt(operator, account.getPublicKey(), 'tickd', {
    type: 'account', limits: { ...unlimited, mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 }, default_permissions: { pub: {}, sub: {} },
  });
  const systemJwt = jwt(operator, system.getPublicKey(), 'SYS', { type: 'account', limits: unlimited, default_permissions: { pub: {}, sub: {} } });
  const config = join(dir, 'operator.conf');
  writeFileSync(config, [
    `operator: ${jwt(operator, operator.getPublicKey(), 'op', { type: 'operator' })}`,
    `system_account: ${system.getPublicKey()}`,
    'resolver: MEMORY',
    `resolver_preload: { ${account.getPublicKey()}: ${accountJwt}, ${system.getPublicKey()}: ${systemJwt} }`,
  ].join('\n'));
  const credsFile = join(dir, 'user.creds');
  writeFileSync(credsFile, [
    '-----BEGIN NATS USER JWT-----',
    jwt(account, user.getPublicKey(), 'replayer', { type: 'user', pub: {}, sub: {}, subs: -1, data: -1, payload: -1 }),
    '------END NATS USER JWT------', '',
    '-----BEGIN USER NKEY SEED-----',
    Buffer.from(user.getSeed()).toString(),
    '------END USER NKEY SEED------', '',
  ].join('\n'));
  return { args: ['-c', config], credsFile };
}

interface Way {
  readonly name: string;
  readonly server: (dir: string) => { args: string[]; credsFile: string | null };
  readonly urls: (nats: NatsCluster) => string[];
  readonly caFile: string | null;
}

const WAYS: Way[] = [
  { name: 'user and password in the URL', server: () => ({ args: ['--user', 'tick', '--pass', 's3cr:t'], credsFile: null }), caFile: null,
    urls: (n) => [`nats://tick:${encodeURIComponent('s3cr:t')}@127.0.0.1:${n.servers[0]!.port}`] },
  { name: 'a credentials file (--cluster-creds)', server: (dir) => operatorMode(dir), caFile: null,
    urls: (n) => [n.servers[0]!.url] },
  { name: 'TLS verified against --cluster-ca (tls:// URL)', caFile: tlsFile('ca.crt'),
    server: () => ({ args: ['--tls', '--tlscert', tlsFile('server.crt'), '--tlskey', tlsFile('server.key')], credsFile: null }),
    urls: (n) => [`tls://127.0.0.1:${n.servers[0]!.port}`] },
];

const ROUNDS_BEHIND = 6;

/** The value of the first call that does not throw (a server just back may not answer JetStream yet), within 30 s. */
async function waitForValue<T>(f: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await f();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('cluster mode: the stream replay\'s own connection to NATS', function () {
  this.timeout(60_000);
  let bin = '';
  let nats: NatsCluster | null = null;
  let nc: NatsConnection | null = null;
  before(function () { bin = requireNatsServer(this); });
  afterEach(async () => {
    await nc?.close().catch(() => undefined);
    nc = null;
    await nats?.stop();
    nats = null;
  });

  /** A stream `name` with `count` job records (every third published with headers), on an open `nc`. */
  async function fill(name: string, count: number): Promise<ReturnType<typeof clusterSubjects>> {
    const jsm = await jetstreamManager(nc!);
    const js = jetstream(nc!);
    const subjects = clusterSubjects(name);
    await waitFor(() => jsm.streams.add({ name, subjects: [subjects.all], max_msgs_per_subject: 1 }).then(() => true, () => false), 20_000, 'the stream');
    const acks: Promise<unknown>[] = [];
    for (let i = 1; i <= count; i++) {
      // Sealed as the leader seals it, for the sequence it lands at: a new stream, one connection, in order.
      const data = sealRecord(testKeys, name, subjects.job(`j.${i}`), i, encodeRecord({ t: 'job', job: { id: `j.${i}`, execution: BigInt(i), status: 'planned' } }).subarray(4));
      if (i % 3 === 0) acks.push(js.publish(subjects.job(`j.${i}`), data, { msgID: `m${i}` }));
      else nc!.publish(subjects.job(`j.${i}`), data);
      if (acks.length >= 500) await Promise.all(acks.splice(0));
    }
    await Promise.all(acks);
    await nc!.flush();
    await waitFor(async () => (await jsm.streams.info(name)).state.messages === count, 10_000, 'every record stored');
    return subjects;
  }

  for (const way of WAYS) {
    it(`reads every record once, headers or not, some deleted, with ${way.name}`, async () => {
      const dir = tempDir();
      const { args, credsFile } = way.server(dir);
      nats = await startNats(bin, 1, args);
      nc = await connectCluster({ urls: way.urls(nats), credsFile, caFile: way.caFile, name: 'wire-test', log: silentLogger(), connectTimeoutMs: 10_000, allowUnauthenticatedNats: false });
      const subjects = await fill('wire', 300);
      const jsm = await jetstreamManager(nc);
      const gone = [1, 2, 150, 299, 300];
      for (const seq of gone) await jsm.streams.deleteMessage('wire', seq);
      const seen: number[] = [];
      const replay = await replayStream(nc, jsm, subjects, testTrust(), (rec, seq) => {
        if (rec.t === 'job' && rec.job.id === `j.${seq}` && rec.job.execution === BigInt(seq)) seen.push(seq);
      });
      const kept = Array.from({ length: 300 }, (_, i) => i + 1).filter((seq) => !gone.includes(seq));
      expect(replay).to.deep.equal({ records: kept.length, lastSeq: 300, checkpointSeq: 0, checkpointError: null });
      expect(seen).to.deep.equal(kept);
      expect((await jsm.streams.info('wire')).state.consumer_count).to.equal(0);
      // A checkpoint made and read over connections made the same way (the compaction child's, the replay's).
      const made = await makeCheckpoint({ urls: way.urls(nats), credsFile, caFile: way.caFile, name: 'wire', nodeName: 'n', replicas: 1, leaseTtlMs: 3000, checkpointRecords: 1, secretFile: testSecretFile(), allowUnauthenticatedNats: false, nodeTags: null });
      expect(made).to.include({ seq: 300, records: kept.length });
      const fromCheckpoint: string[] = [];
      const again = await replayStream(nc!, jsm, subjects, testTrust(), (rec) => { if (rec.t === 'job') fromCheckpoint.push(rec.job.id); });
      expect(again).to.deep.equal({ records: kept.length, lastSeq: 300, checkpointSeq: 300, checkpointError: null });
      expect(fromCheckpoint).to.deep.equal(kept.map((seq) => `j.${seq}`));
      expect((await jsm.streams.info('wire-checkpoint')).state.consumer_count).to.equal(0);
    });
  }

  /**
   * Rounds of: one of three servers killed, 300 records written through the other two, the
   * server restarted; then `check` at once over a connection to it (a consumer made there reads
   * that server's copy, behind until it catches up). Returns what the checks said was short.
   */
  async function behindRounds(check: (there: NatsConnection, written: number) => Promise<string | null>): Promise<string[]> {
    nats = await startNats(bin, 3);
    const victim = nats.servers[2]!;
    // The writer talks to the other two, which keep the stream's majority.
    nc = await connectCluster({ urls: nats.servers.slice(0, 2).map((s) => s.url), credsFile: null, caFile: null, name: 'wire-test', log: silentLogger(), connectTimeoutMs: 10_000, allowUnauthenticatedNats: false });
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const subjects = clusterSubjects('behind');
    await waitFor(() => jsm.streams.add({ name: 'behind', subjects: [subjects.all], max_msgs_per_subject: 1, num_replicas: 3 }).then(() => true, () => false), 30_000, 'the stream');
    const ledByOthers = (): Promise<boolean> => jsm.streams.info('behind').then((i) => i.cluster?.leader !== undefined && i.cluster.leader !== victim.name, () => false);
    let written = 0;
    const short: string[] = [];
    for (let round = 0; round < ROUNDS_BEHIND; round++) {
      await victim.kill();
      await waitFor(ledByOthers, 30_000, 'a stream leader other than the killed server');
      const acks: Promise<unknown>[] = [];
      for (let i = 0; i < 300; i++, written++) {
        const payload = encodeRecord({ t: 'job', job: { id: `j.${written}`, execution: 1n, status: 'planned' } }).subarray(4);
        acks.push(js.publish(subjects.job(`j.${written}`), sealRecord(testKeys, 'behind', subjects.job(`j.${written}`), written + 1, payload), { timeout: 20_000 }));
      }
      await Promise.all(acks);
      await victim.restart();
      const there = await connectCluster({ urls: [victim.url], credsFile: null, caFile: null, name: 'wire-test-behind', log: silentLogger(), connectTimeoutMs: 10_000, allowUnauthenticatedNats: false });
      try {
        const said = await check(there, written);
        if (said !== null) short.push(`round ${round}: ${said}`);
      } finally {
        await there.close();
      }
    }
    return short;
  }

  it('reads through a server that came back and is still catching up (asks the leader before it ends a read short)', async function () {
    this.timeout(180_000);
    const subjects = clusterSubjects('behind');
    const short = await behindRounds(async (there, written) => {
      const ids = new Set<string>();
      const replay = await waitForValue(async () => {
        ids.clear();
        return replayStream(there, await jetstreamManager(there), subjects, testTrust(), (rec) => { if (rec.t === 'job') ids.add(rec.job.id); });
      });
      return replay.records === written && ids.size === written ? null : `${ids.size} of ${written} records (lastSeq ${replay.lastSeq})`;
    });
    expect(short).to.deep.equal([]);
  });

  it('a follower\'s tail is caught up only once the leader has nothing after what it applied', async function () {
    this.timeout(180_000);
    const short = await behindRounds(async (there, written) => {
      const ids = new Set<string>();
      const jsmThere = await waitForValue(() => jetstreamManager(there));
      const tail = new StreamTail({ trust: testTrust(), js: jetstream(there), jsm: jsmThere, stream: 'behind', afterSeq: 0, apply: (rec) => { if (rec.t === 'job') ids.add(rec.job.id); }, log: silentLogger(), tooNew: (err) => { throw err; } });
      try {
        const giveUpAt = Date.now() + 30_000;
        await tail.caughtUp(written, () => Date.now() > giveUpAt);
        return ids.size === written ? null : `caught up with ${ids.size} of ${written} records applied (sequence ${tail.applied})`;
      } finally {
        await tail.stop();
      }
    });
    expect(short).to.deep.equal([]);
  });

  it('fails the read when the server goes away in the middle of it (never ends it short)', async () => {
    nats = await startNats(bin, 1);
    nc = await connectCluster({ urls: [nats.servers[0]!.url], credsFile: null, caFile: null, name: 'wire-test', log: silentLogger(), connectTimeoutMs: 10_000, allowUnauthenticatedNats: false });
    // More than the first pull requests ask for: the rest can only come after the kill.
    const subjects = await fill('lost', 20_000);
    const jsm = await jetstreamManager(nc);
    let records = 0;
    const read = replayStream(nc, jsm, subjects, testTrust(), () => { if (records++ === 0) void nats!.servers[0]!.kill(); });
    const err = await read.then(() => null, (e: Error) => e);
    // Closed, reset, or a write that failed: whichever the socket saw first.
    expect(err?.message, `read ${records} records`).to.match(/^stream lost: the replay's connection to n1: /);
    expect(records).to.be.below(20_000);
  });
});
