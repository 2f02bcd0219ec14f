// The daemon as an operator meets it: flags, startup errors, readiness, STAT over TCP through
// the whole primary/worker path, worker respawn, signals.
import { expect } from 'chai';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Daemon, runTickd } from '../helpers/daemon.ts';
import { LineClient, stat, waitFor } from '../helpers/client.ts';
import { childrenRunning } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';
import { STAT_KEYS } from '../../lib/domain/stat.ts';

describe('tickd lifecycle', function () {
  this.timeout(30000);

  it('--version prints the package version and the time zone database schedules use', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const r = await runTickd(['--version']);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.equal(`tickd ${pkg.version} (time zone database ${process.versions.tz})\n`);
  });

  it('--help prints usage and exits 0; an unknown flag exits 2 with usage', async () => {
    const help = await runTickd(['--help']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.match(/^Usage:/);
    const bad = await runTickd(['--frobnicate']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/frobnicate/).and.match(/Usage:/);
  });

  it('--check validates configuration', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'good.toml'), '[database]\npersistence = "memory"\n');
    writeFileSync(join(dir, 'bad.toml'), '[database]\nframerate = 0\n');
    const ok = await runTickd(['--check', '-c', join(dir, 'good.toml')]);
    expect(ok.code).to.equal(0);
    expect(ok.stdout).to.equal('configuration ok\n');
    const bad = await runTickd(['--check', '-c', join(dir, 'bad.toml')]);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^tickd: config: FramerateOutOfRange: database\.framerate/);
  });

  it('a missing config file is an error, not a fallback to defaults', async () => {
    const r = await runTickd(['-c', '/nonexistent/tickd.toml']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^tickd: config: ReadError: cannot read \/nonexistent\/tickd\.toml: ENOENT\n$/);
  });

  it('a bad token file stops startup with its error name', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'tokens.toml'), '[token.a]\nnamespace = "a."\n');
    writeFileSync(join(dir, 'c.toml'), `[controller]\nlisten = "127.0.0.1:0"\nauth_file = "${join(dir, 'tokens.toml')}"\n[database]\npersistence = "memory"\n`);
    const r = await runTickd(['-c', join(dir, 'c.toml')]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^tickd: auth_file: MissingSecret: token\.a/);
  });

  it('an address that cannot be bound is a startup error: exit 1, no half-started daemon', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const dir = tempDir();
    writeFileSync(join(dir, 'c.toml'), `[controller]\nlisten = "127.0.0.1:${port}"\n[database]\npersistence = "memory"\n`);
    const r = await runTickd(['-c', join(dir, 'c.toml'), '-w', '2']);
    blocker.close();
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/tickd: listen: ListenError: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
  });

  describe('running', () => {
    let daemon: Daemon;
    before(async () => { daemon = await Daemon.start({ workers: 2, args: ['--pidfile', 'tickd.pid'] }); });
    after(async () => { await daemon?.stop(); });

    it('logs startup lines naming the config, the addresses and the persistence mode', async () => {
      const starting = await daemon.waitForLog((r) => r['msg'] === 'starting');
      expect(starting['config']).to.equal(daemon.configPath);
      const ready = await daemon.waitForLog((r) => r['msg'] === 'ready');
      expect(ready['tcp']).to.match(/^127\.0\.0\.1:\d+$/);
      expect(ready['persistence']).to.equal('memory');
    });

    it('writes the pidfile once listening', () => {
      expect(readFileSync(join(daemon.dir, 'tickd.pid'), 'utf8')).to.equal(`${daemon.proc.pid}\n`);
    });

    it('answers STAT with the 15 keys in order, connections summed across workers', async () => {
      const clients = await Promise.all([1, 2, 3].map(() => LineClient.connect(daemon.tcp)));
      await waitFor(async () => (await stat(clients[0]!)).get('connections') === '3', 5000, '3 connections');
      const lines = await clients[0]!.request('r1', 'STAT');
      expect(lines.length).to.equal(16);
      expect(lines.slice(0, 15).map((l) => l.split(' ')[1])).to.deep.equal([...STAT_KEYS]);
      expect(lines[15]).to.equal('r1 OK');
      const m = await stat(clients[1]!);
      expect(m.get('persistence')).to.equal('memory');
      expect(m.get('framerate')).to.equal('512');
      expect(m.get('auth_enabled')).to.equal('0');
      expect(m.get('tls_enabled')).to.equal('0');
      expect(BigInt(m.get('uptime_ns')!) > 0n).to.equal(true);
      for (const c of clients) c.close();
    });

    it('replaces a worker that dies and keeps serving', async () => {
      // The primary's other children (the runner child) are not workers.
      const workers = () => childrenRunning(daemon.proc.pid!, 'worker.ts');
      const before = workers();
      expect(before.length).to.equal(2);
      process.kill(before[0]!, 'SIGKILL');
      await daemon.waitForLog((r) => r['msg'] === 'worker died; replacing it');
      await waitFor(() => { const now = workers(); return now.length === 2 && !now.includes(before[0]!); }, 10000, 'a replacement worker');
      const c = await LineClient.connect(daemon.tcp);
      expect((await c.request('x', 'STAT')).at(-1)).to.equal('x OK');
      c.close();
    });

    it('stops on SIGTERM with exit 0 and removes the pidfile', async () => {
      const c = await LineClient.connect(daemon.tcp);
      const { code } = await daemon.stop('SIGTERM');
      expect(code).to.equal(0);
      expect(existsSync(join(daemon.dir, 'tickd.pid'))).to.equal(false);
      await c.waitClosed();
    });
  });

  it('stops on SIGINT with exit 0', async () => {
    const d = await Daemon.start();
    const r = await d.stop('SIGINT');
    expect(r.code, JSON.stringify(r) + d.stderr.join('\n')).to.equal(0);
  });
});
