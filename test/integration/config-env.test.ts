// TICKD_CONFIG (tickd(8) ENVIRONMENT): the configuration file when -c is absent, for the
// daemon and for --check; -c wins over it; empty is unset (every default); a file it names
// that cannot be read is the same startup error as with -c, never a fallback to defaults.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LineClient, stat } from '../helpers/client.ts';
import { Daemon, runTickd } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';

describe('TICKD_CONFIG', function () {
  this.timeout(30000);
  const daemons: Daemon[] = [];
  afterEach(async () => { for (const d of daemons.splice(0)) await d.stop(); });

  it('names the configuration file when -c is absent', async () => {
    const daemon = await Daemon.start({ configInEnv: true, config: { database: { framerate: 77 } } });
    daemons.push(daemon);
    expect(daemon.proc.spawnargs).not.to.include('-c');
    const starting = await daemon.waitForLog((r) => r['msg'] === 'starting');
    expect(starting['config']).to.equal(daemon.configPath);
    const client = await LineClient.connect(daemon.tcp);
    try {
      expect((await stat(client)).get('framerate')).to.equal('77');
    } finally {
      client.close();
    }
  });

  it('-c wins over it', async () => {
    const daemon = await Daemon.start({ env: { TICKD_CONFIG: '/nonexistent/tickd.toml' } });
    daemons.push(daemon);
    expect((await daemon.waitForLog((r) => r['msg'] === 'starting'))['config']).to.equal(daemon.configPath);
  });

  it('is read by --check too; empty means unset', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'good.toml'), '[database]\npersistence = "memory"\n');
    writeFileSync(join(dir, 'bad.toml'), '[database]\nframerate = 0\n');
    const ok = await runTickd(['--check'], { env: { TICKD_CONFIG: join(dir, 'good.toml') } });
    expect(ok).to.deep.include({ code: 0, stdout: 'configuration ok\n' });
    const bad = await runTickd(['--check'], { env: { TICKD_CONFIG: join(dir, 'bad.toml') } });
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^tickd: config: FramerateOutOfRange: database\.framerate/);
    const flagWins = await runTickd(['--check', '-c', join(dir, 'good.toml')], { env: { TICKD_CONFIG: join(dir, 'bad.toml') } });
    expect(flagWins.code, flagWins.stderr).to.equal(0);
    const empty = await runTickd(['--check'], { env: { TICKD_CONFIG: '' } });
    expect(empty).to.deep.include({ code: 0, stdout: 'configuration ok\n' });
  });

  it('a file it names that cannot be read is a startup error, not the defaults', async () => {
    const r = await runTickd([], { env: { TICKD_CONFIG: '/nonexistent/tickd.toml' } });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^tickd: config: ReadError: cannot read \/nonexistent\/tickd\.toml: ENOENT\n$/);
  });
});
