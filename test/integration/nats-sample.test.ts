// etc/nats/nats-server.conf, the sample NATS server of a tickd cluster (tickd(8) CLUSTER MODE):
// nats-server accepts it; it names the machines etc/systemd/tickd-cluster.service connects
// to; three copies of it, rewritten for one machine's loopback (server_name, ports, store
// directory, routes), form one JetStream cluster that holds a stream of three replicas; and
// its commented-out sync_interval is refused exactly by the NATS versions its comment says.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { waitFor } from '../helpers/client.ts';
import { closeNatsClients, connectNats, freePort, requireNatsServer } from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = readFileSync(join(ROOT, 'etc/nats/nats-server.conf'), 'utf8');
const UNIT = readFileSync(join(ROOT, 'etc/systemd/tickd-cluster.service'), 'utf8');

/** nats-server's own check of a configuration file: its exit status and what it said. */
function check(bin: string, file: string): { ok: boolean; out: string } {
  const r = spawnSync(bin, ['-c', file, '-t'], { encoding: 'utf8' });
  return { ok: r.status === 0, out: r.stdout + r.stderr };
}

/** The sample with one setting's line replaced; fails when the line is not there. */
function rewrite(text: string, from: RegExp, to: string): string {
  expect(text, String(from)).to.match(from);
  return text.replace(from, to);
}

describe('etc/nats/nats-server.conf', function () {
  this.timeout(60_000);
  const procs: ChildProcess[] = [];
  afterEach(async () => {
    await closeNatsClients();
    await Promise.all(procs.splice(0).map((p) => new Promise<void>((resolve) => {
      if (p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    })));
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

  it('is accepted by nats-server', function () {
    const bin = requireNatsServer(this);
    const r = check(bin, join(ROOT, 'etc/nats/nats-server.conf'));
    expect(r.ok, r.out).to.equal(true);
  });

  it('has a sync_interval line that NATS 2.9 refuses and 2.10 and later accept', function () {
    const bin = requireNatsServer(this);
    const version = /v?(\d+)\.(\d+)\./.exec(spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout);
    expect(version, 'nats-server --version').to.not.equal(null);
    const file = join(tempDir('tickd-nats-sample-'), 'sync.conf');
    writeFileSync(file, rewrite(SAMPLE, /^(\s*)# (sync_interval: always)$/m, '$1$2'));
    const modern = Number(version![1]) > 2 || Number(version![2]) >= 10;
    expect(check(bin, file).ok, `nats-server ${version![0]}`).to.equal(modern);
  });

  it('three copies on loopback form one JetStream cluster holding a stream of 3 replicas', async function () {
    const bin = requireNatsServer(this);
    const dir = tempDir('tickd-nats-sample-');
    const clientPorts = await Promise.all([1, 2, 3].map(() => freePort()));
    const routePorts = await Promise.all([1, 2, 3].map(() => freePort()));
    for (let i = 0; i < 3; i++) {
      let conf = rewrite(SAMPLE, /^server_name: n1$/m, `server_name: n${i + 1}`);
      conf = rewrite(conf, /^listen: 0\.0\.0\.0:4222$/m, `listen: 127.0.0.1:${clientPorts[i]}`);
      conf = rewrite(conf, /^http: .*$/m, '');
      conf = rewrite(conf, /^(\s*)store_dir: \/var\/lib\/nats$/m, `$1store_dir: ${join(dir, `n${i + 1}`)}`);
      conf = rewrite(conf, /^(\s*)listen: 0\.0\.0\.0:6222$/m, `$1listen: 127.0.0.1:${routePorts[i]}`);
      for (const [k, port] of routePorts.entries()) {
        conf = rewrite(conf, new RegExp(`nats-route://n${k + 1}\\.example\\.net:6222`), `nats-route://127.0.0.1:${port}`);
      }
      const file = join(dir, `n${i + 1}.conf`);
      writeFileSync(file, conf);
      procs.push(spawn(bin, ['-c', file], { stdio: 'ignore' }));
    }
    // The servers were only spawned: the first connection waits for one of them to listen.
    let nc: Awaited<ReturnType<typeof connectNats>> | null = null;
    await waitFor(async () => (nc = await connectNats(clientPorts.map((p) => `nats://127.0.0.1:${p}`).join(',')).catch(() => null)) !== null, 10_000, 'a server listening');
    let replicas = 0;
    // A cluster that has just started answers JetStream requests once it has elected its meta leader.
    await waitFor(async () => {
      try {
        const jsm = await jetstreamManager(nc!);
        replicas = (await jsm.streams.add({ name: 'sample', subjects: ['sample.>'], num_replicas: 3 })).config.num_replicas;
        return true;
      } catch {
        return false;
      }
    }, 30_000, 'the JetStream cluster to take a stream of 3 replicas');
    expect(replicas).to.equal(3);
    await waitFor(async () => {
      const jsm = await jetstreamManager(nc!);
      const c = (await jsm.streams.info('sample')).cluster;
      return c?.leader !== undefined && (c.replicas ?? []).length === 2;
    }, 30_000, 'the stream to have a leader and two other replicas');
  });
});
