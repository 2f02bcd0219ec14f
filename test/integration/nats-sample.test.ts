// etc/nats/nats-server.conf, the sample NATS server of a tickd cluster (tickd(8) CLUSTER MODE):
// nats-server accepts it (with TLS files made as its comment says); it names the machines
// etc/systemd/tickd-cluster.service connects to, and the unit connects as the sample wants
// (TLS, the sample's CA, the user `tickd`); three copies of it, rewritten for one machine's
// loopback (server_name, ports, store directory, routes, TLS files), form one JetStream
// cluster that holds the tickd stream with three replicas; and its commented-out sync_interval
// is refused exactly by the NATS versions its comment says. What its users may and may not
// do: nats-sample-security.test.ts.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { parseCli } from '../../lib/cli.ts';
import { waitFor } from '../helpers/client.ts';
import {
  closeNatsClients, connectNats, makeTlsFiles, requireNatsServer, rewriteConf, sampleWithTls, startSampleCluster,
  type SampleCluster, type TlsFiles,
} from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = readFileSync(join(ROOT, 'etc/nats/nats-server.conf'), 'utf8');
const UNIT = readFileSync(join(ROOT, 'etc/systemd/tickd-cluster.service'), 'utf8');

/** nats-server's own check of a configuration file: its exit status and what it said. */
function check(bin: string, file: string): { ok: boolean; out: string } {
  const r = spawnSync(bin, ['-c', file, '-t'], { encoding: 'utf8' });
  return { ok: r.status === 0, out: r.stdout + r.stderr };
}

/** The sample (or `text`) with its TLS files made, written to a file of its own. */
function sampleFile(text: string, tls: TlsFiles): string {
  const file = join(tempDir('tickd-nats-sample-'), 'nats-server.conf');
  writeFileSync(file, sampleWithTls(text, tls));
  return file;
}

/** The unit's ExecStart arguments (continuation lines joined). */
function execStart(): string[] {
  const exec = /^ExecStart=(.*)$/m.exec(UNIT.replace(/\\\n\s*/g, ' '));
  expect(exec, 'ExecStart').to.not.equal(null);
  return exec![1]!.trim().split(/\s+/).slice(1);
}

describe('etc/nats/nats-server.conf', function () {
  this.timeout(60_000);
  let tls: TlsFiles | null = null;
  const clusters: SampleCluster[] = [];
  // One set of TLS files serves every test (openssl takes a while).
  const tlsFiles = (): TlsFiles => (tls ??= makeTlsFiles());
  afterEach(async () => {
    await closeNatsClients();
    await Promise.all(clusters.splice(0).map((c) => c.stop()));
  });

  it('names, in its routes, the machines whose servers the cluster unit connects to', () => {
    const routes = [...SAMPLE.matchAll(/^\s*nats-route:\/\/([\w.-]+):(\d+)\s*$/gm)].map((m) => ({ host: m[1]!, port: m[2]! }));
    expect(routes).to.have.length(3);
    expect(SAMPLE).to.match(new RegExp(`^\\s*listen: 0\\.0\\.0\\.0:${routes[0]!.port}$`, 'm'));
    const exec = /^ExecStart=.*?--cluster (\S+)/ms.exec(UNIT.replace(/\\\n\s*/g, ' '));
    expect(exec, 'ExecStart --cluster').to.not.equal(null);
    const urls = exec![1]!.split(',').map((u) => new URL(u));
    expect(urls.map((u) => u.hostname)).to.deep.equal(routes.map((r) => r.host));
    const client = /^listen: 0\.0\.0\.0:(\d+)$/m.exec(SAMPLE);
    expect(client, 'client listen').to.not.equal(null);
    for (const u of urls) expect(u.port).to.equal(client![1]);
  });

  it('is what the cluster unit connects to: TLS with the sample\'s CA, the user tickd, a shared secret', () => {
    const action = parseCli(execStart());
    expect(action.mode).to.equal('run');
    const cluster = action.mode === 'run' ? action.cluster : null;
    expect(cluster, 'ExecStart runs a cluster node').to.not.equal(null);
    for (const u of cluster!.urls.map((x) => new URL(x))) expect(u.protocol, String(u)).to.equal('tls:');
    const users = cluster!.urls.map((x) => new URL(x)).filter((u) => u.username !== '');
    expect(users.map((u) => u.username)).to.deep.equal(['tickd']);
    // The password is systemd's variable, not in the (world-readable) unit.
    expect(decodeURIComponent(users[0]!.password)).to.equal('${TICKD_NATS_PASSWORD}');
    expect(cluster!.caFile).to.match(/\.pem$/);
    expect(cluster!.secretFile).to.equal('/etc/tickd/cluster.secret');
    expect(cluster!.allowUnauthenticatedNats).to.equal(false);
    expect(cluster!.name).to.equal('tickd');
    // The sample's permissions are written for that cluster name.
    expect(SAMPLE).to.include('"$TICKD.tickd.forward"');
  });

  it('is accepted by nats-server', function () {
    const bin = requireNatsServer(this);
    const r = check(bin, sampleFile(SAMPLE, tlsFiles()));
    expect(r.ok, r.out).to.equal(true);
  });

  it('has a sync_interval line that NATS 2.9 refuses and 2.10 and later accept', function () {
    const bin = requireNatsServer(this);
    const version = /v?(\d+)\.(\d+)\./.exec(spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout);
    expect(version, 'nats-server --version').to.not.equal(null);
    const file = sampleFile(rewriteConf(SAMPLE, /^(\s*)# (sync_interval: always)$/m, '$1$2'), tlsFiles());
    const modern = Number(version![1]) > 2 || Number(version![2]) >= 10;
    expect(check(bin, file).ok, `nats-server ${version![0]}`).to.equal(modern);
  });

  it('three copies on loopback form one JetStream cluster holding the tickd stream with 3 replicas', async function () {
    const bin = requireNatsServer(this);
    const files = tlsFiles();
    const sample = rewriteConf(SAMPLE, /password: "CHANGE-ME"/, 'password: "sample-test"');
    const cluster = await startSampleCluster(bin, sample, files);
    clusters.push(cluster);
    const nc = await connectNats(cluster.urls().join(','), { user: 'tickd', pass: 'sample-test', tls: { caFile: files.ca } });
    let replicas = 0;
    // A cluster that has just started answers JetStream requests once it has elected its meta leader.
    await waitFor(async () => {
      try {
        const jsm = await jetstreamManager(nc);
        replicas = (await jsm.streams.add({ name: 'tickd', subjects: ['tickd.>'], num_replicas: 3 })).config.num_replicas;
        return true;
      } catch {
        return false;
      }
    }, 30_000, 'the JetStream cluster to take a stream of 3 replicas');
    expect(replicas).to.equal(3);
    await waitFor(async () => {
      const jsm = await jetstreamManager(nc);
      const c = (await jsm.streams.info('tickd')).cluster;
      return c?.leader !== undefined && (c.replicas ?? []).length === 2;
    }, 30_000, 'the stream to have a leader and two other replicas');
  });
});
