// A tickd node refuses an open NATS (tickd(8) SECURITY): connectCluster, which the daemon, `tickd
// dump --cluster` and `tickd import` connect with, fails with a startup error naming
// --cluster-allow-unauthenticated-nats when the server asks no login and listens beyond
// loopback (here 0.0.0.0, reached through 127.0.0.1); with the flag it connects and logs a
// warning; a server that asks a login, or listens on loopback only, is taken without either.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import bunyan from 'bunyan';
import { connectCluster } from '../../lib/jetstream/connect.ts';
import { StartupError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { waitFor } from '../helpers/client.ts';
import { freePort, requireNatsServer } from '../helpers/nats.ts';

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/** A logger that keeps its records (warn and above). */
function keepingLogger(): { log: Logger; records: () => Array<Record<string, unknown>> } {
  const ring = new bunyan.RingBuffer({ limit: 100 });
  const log = bunyan.createLogger({ name: 'tickd', streams: [{ type: 'raw', stream: ring, level: bunyan.WARN }] });
  return { log, records: () => ring.records as Array<Record<string, unknown>> };
}

describe('cluster mode on an open NATS server', function () {
  this.timeout(30_000);
  let bin: string;
  const procs: ChildProcess[] = [];

  before(function () {
    bin = requireNatsServer(this);
  });

  afterEach(async () => {
    await Promise.all(procs.splice(0).map((p) => new Promise<void>((resolve) => {
      if (p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    })));
  });

  /** A plain nats-server (no JetStream needed) on `host` and a free port; its port. */
  async function server(host: string, ...extra: string[]): Promise<number> {
    const port = await freePort();
    const proc = spawn(bin, ['-a', host, '-p', String(port), ...extra], { stdio: 'ignore' });
    procs.push(proc);
    await waitFor(async () => {
      if (proc.exitCode !== null) throw new Error(`nats-server on ${host}:${port} exited ${proc.exitCode}`);
      return accepts(port);
    }, 10_000, `nats-server on ${host}:${port}`);
    return port;
  }

  function connectTo(port: number, allowUnauthenticatedNats: boolean, log: Logger, userinfo = '') {
    return connectCluster({
      urls: [`nats://${userinfo}127.0.0.1:${port}`], credsFile: null, caFile: null, name: 'open-nats-test', log,
      connectTimeoutMs: 5_000, allowUnauthenticatedNats,
    });
  }

  it('refuses a server without authentication listening on 0.0.0.0, naming the flag', async () => {
    const port = await server('0.0.0.0');
    const err = await connectTo(port, false, keepingLogger().log).then(async (nc) => { await nc.close(); return null; }, (e: unknown) => e);
    expect(err).to.be.instanceOf(StartupError);
    const e = err as StartupError;
    expect(e.scope).to.equal('cluster');
    expect(e.name).to.equal('ClusterError');
    expect(e.message).to.include('requires no authentication');
    expect(e.message).to.include(`0.0.0.0:${port}`);
    expect(e.message).to.include('--cluster-allow-unauthenticated-nats');
    expect(e.line()).to.match(/^tickd: cluster: ClusterError: /);
  });

  it('connects to it with --cluster-allow-unauthenticated-nats, logging a warning', async () => {
    const port = await server('0.0.0.0');
    const { log, records } = keepingLogger();
    const nc = await connectTo(port, true, log);
    try {
      expect(nc.info?.auth_required).to.not.equal(true);
      const warning = records().find((r) => String(r['msg']).startsWith('INSECURE: '));
      expect(warning, JSON.stringify(records())).to.not.equal(undefined);
      expect(warning!['level']).to.equal(bunyan.WARN);
      expect(String(warning!['msg'])).to.include('0.0.0.0');
    } finally {
      await nc.close();
    }
  });

  it('takes a server that requires a login on 0.0.0.0, and one without on 127.0.0.1, with no warning', async () => {
    const guarded = await server('0.0.0.0', '--user', 'tickd', '--pass', 'open-nats-test');
    const loopback = await server('127.0.0.1');
    for (const [port, userinfo] of [[guarded, 'tickd:open-nats-test@'], [loopback, '']] as const) {
      const { log, records } = keepingLogger();
      const nc = await connectTo(port, false, log, userinfo);
      await nc.close();
      expect(records(), `port ${port}`).to.deep.equal([]);
    }
  });
});
