// Cluster mode and record formats (tickd(8) UPGRADING): each node says the format it reads,
// and a record of a newer format in the stream (a newer tickd's, sealed with the cluster's
// key) is never quarantined nor deleted: the node stops applying there, steps down, no longer
// competes for the lease, and says it must be upgraded.
import { expect } from 'chai';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { FORMAT_VERSION } from '../../lib/domain/format.ts';
import { clusterSubjects } from '../../lib/jetstream/subjects.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { publishSealed, testSecretFile } from '../helpers/cluster-secret.ts';
import { Daemon } from '../helpers/daemon.ts';
import { closeNatsClients, connectNats, requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';

const NAME = 'fmt';

describe('cluster mode: record formats', function () {
  this.timeout(90_000);
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

  const start = async (n: NatsCluster): Promise<Daemon> => {
    const d = await Daemon.start({
      args: ['--cluster', n.urls, '--cluster-name', NAME, '--node-name', 'n1', '--cluster-replicas', '1', '--lease-ttl', '1s', '--cluster-secret-file', testSecretFile()],
      dir: tempDir(), readyTimeoutMs: 60_000, config: { http: { listen: '127.0.0.1:0' } },
    });
    daemons.push(d);
    return d;
  };
  const view = async (d: Daemon): Promise<Record<string, unknown>> => {
    const res = await fetch(`http://${d.http!.host}:${d.http!.port}/cluster`);
    return await res.json() as Record<string, unknown>;
  };

  it('says the format each node reads, and stops before a newer tickd\'s record without dropping it', async () => {
    nats = await startNats(bin, 1);
    const d = await start(nats);
    await d.waitForLog((r) => r['msg'] === 'role changed: leader', 15_000);
    const c = await LineClient.connect(d.tcp);
    clients.push(c);
    expect(await c.request('s', 'SET old.1 4000000000000000000', 10_000)).to.deep.equal(['s OK']);
    await waitFor(async () => ((await view(d))['nodes'] as unknown[]).length === 1, 10_000, 'the node in its own view');
    const before = await view(d);
    expect(before['format']).to.equal(FORMAT_VERSION);
    expect(before['active_format'], 'recorded in the stream only after every node read it for 30 s').to.equal(1);
    expect(before['upgrade_needed']).to.equal(null);
    expect((before['nodes'] as Array<Record<string, unknown>>)[0]!['format']).to.equal(FORMAT_VERSION);

    // What a tickd of format 7 might write: an extension record (type 0x10) that needs 7.
    const nc = await connectNats(nats.urls);
    const jsm = await jetstreamManager(nc);
    const subjects = clusterSubjects(NAME);
    const seq = await publishSealed(jetstream(nc), jsm, NAME, subjects.job('new.1'), Buffer.from([0x10, 0x00, 0x07, 0xde, 0xad]));
    // The leader's next write is refused (someone wrote); it rebuilds and meets the record.
    await c.request('t', 'SET old.2 4000000000000000000', 10_000);
    const said = await d.waitForLog((r) => String(r['msg']).startsWith('this node must be upgraded'), 20_000);
    expect(said).to.include({ format: 7, seq, subject: subjects.job('new.1'), reads: FORMAT_VERSION });
    await waitFor(async () => (await view(d))['role'] === 'follower', 10_000, 'the node steps down');
    expect((await view(d))['upgrade_needed']).to.deep.equal({ format: 7, seq, subject: subjects.job('new.1') });
    // Never quarantined, never deleted: the record stays for the nodes that read it.
    expect(d.stderr.filter((l) => l.includes('stream message quarantined'))).to.deep.equal([]);
    const kept = await jsm.streams.getMessage(NAME, { seq });
    expect(kept?.subject).to.equal(subjects.job('new.1'));
    // It no longer competes for the lease: nobody leads.
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await view(d))['role']).to.equal('follower');
    expect(d.proc.exitCode).to.equal(null);
  });
});
