// The System V init script (etc/init.d/tickd) driving the real daemon, plus the static shape
// of etc/default/tickd, etc/systemd/tickd.service and etc/systemd/tickd-cluster.service. Each test gets its own settings file
// (TICKD_DEFAULTS) pointing at a temp config (memory persistence, 127.0.0.1:0), pidfile,
// run directory and output file, with TICKD_NODE = this Node 24 and TICKD_USER empty.
// Every daemon started is stopped afterwards, by its pid, whatever the test did.
import { expect } from 'chai';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from '../../lib/cli.ts';
import { STAT_KEYS } from '../../lib/domain/stat.ts';
import { LineClient, stat, waitFor } from '../helpers/client.ts';
import { parseAddress, TICKD } from '../helpers/daemon.ts';
import { alive, cmdline } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = join(ROOT, 'etc/init.d/tickd');
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const CAN_RUN = process.platform === 'linux'
  && spawnSync('sh', ['-c', 'command -v start-stop-daemon && command -v bash'], { env: { PATH: SYSTEM_PATH } }).status === 0;

interface Setup {
  readonly dir: string;
  readonly config: string;
  readonly pidfile: string;
  readonly output: string;
  readonly env: NodeJS.ProcessEnv;
}

const MEMORY_CONFIG = '[controller]\nlisten = "127.0.0.1:0"\n[database]\npersistence = "memory"\n';
const started: Setup[] = [];

function setup(config = MEMORY_CONFIG, initFunctions: string | null = null): Setup {
  const dir = tempDir('tickd-init-');
  const s: Setup = {
    dir,
    config: join(dir, 'tickd.toml'),
    pidfile: join(dir, 'run', 'tickd.pid'),
    output: join(dir, 'log', 'tickd.log'),
    env: {},
  };
  writeFileSync(s.config, config);
  const defaults = join(dir, 'defaults');
  const vars: Record<string, string> = {
    TICKD_CONFIG: s.config,
    TICKD_PIDFILE: s.pidfile,
    TICKD_RUNDIR: join(dir, 'lib'),
    TICKD_USER: '',
    TICKD_ARGS: '-w 1',
    TICKD_BIN: TICKD,
    TICKD_NODE: process.execPath,
    TICKD_OUTPUT: s.output,
    TICKD_STOP_TIMEOUT: '20',
  };
  writeFileSync(defaults, Object.entries(vars).map(([k, v]) => `${k}='${v.replace(/'/g, `'\\''`)}'\n`).join(''));
  // Without the override the script uses /lib/lsb/init-functions; a missing file forces its fallback.
  const env = { ...process.env, TICKD_DEFAULTS: defaults, TICKD_INIT_FUNCTIONS: initFunctions ?? join(dir, 'no-init-functions') };
  started.push(s);
  return { ...s, env };
}

function initScript(s: Setup, action: string, shell = 'bash'): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(shell, [SCRIPT, action], { env: s.env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, out: stdout + stderr });
    });
  });
}

function pidIn(path: string): number {
  const pid = Number(readFileSync(path, 'utf8').trim());
  expect(Number.isInteger(pid) && pid > 1, `pid in ${path}`).to.equal(true);
  return pid;
}

/** The daemon's "ready" log record, from the output file the script redirects it to. */
async function readyRecord(s: Setup, pid: number): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | null = null;
  await waitFor(() => {
    if (!existsSync(s.output)) return false;
    for (const line of readFileSync(s.output, 'utf8').split('\n')) {
      try {
        const rec = JSON.parse(line) as Record<string, unknown>;
        if (rec['msg'] === 'ready' && rec['pid'] === pid) found = rec;
      } catch { /* not a log record */ }
    }
    return found !== null;
  }, 10_000, 'the ready record');
  return found!;
}

describe('etc/init.d/tickd', function () {
  this.timeout(60_000);

  before(function () {
    if (!CAN_RUN) this.skip();
  });

  afterEach(async () => {
    for (const s of started.splice(0)) {
      if (!existsSync(s.pidfile)) continue;
      const pid = Number(readFileSync(s.pidfile, 'utf8').trim());
      try {
        if (alive(pid) && cmdline(pid).includes(TICKD)) process.kill(pid, 'SIGKILL');
      } catch { /* already gone */ }
    }
  });

  it('start, status, stop: the pidfile names the daemon; status 0 while running, 3 once stopped', async () => {
    const s = setup();
    const start = await initScript(s, 'start');
    expect(start.code, start.out).to.equal(0);
    expect(start.out).to.match(/^Starting job scheduler: tickd\.$/m);

    const pid = pidIn(s.pidfile);
    expect(alive(pid)).to.equal(true);
    expect(cmdline(pid).filter((a) => !a.startsWith('--max-semi-space-size')).slice(0, 2)).to.deep.equal([process.execPath, TICKD]); // Node's options between (bin/tickd)
    // It is the daemon: its own ready record carries this pid, and it answers STAT.
    const ready = await readyRecord(s, pid);
    const client = await LineClient.connect(parseAddress(String(ready['tcp'])));
    try {
      const values = await stat(client);
      expect([...values.keys()]).to.deep.equal([...STAT_KEYS]);
      expect(values.get('persistence')).to.equal('memory');
    } finally {
      client.close();
    }

    const status = await initScript(s, 'status');
    expect(status.code, status.out).to.equal(0);
    expect(status.out).to.include(`tickd is running (pid ${pid})`);

    const stop = await initScript(s, 'stop');
    expect(stop.code, stop.out).to.equal(0);
    expect(alive(pid)).to.equal(false);
    expect(existsSync(s.pidfile)).to.equal(false);
    expect(readFileSync(s.output, 'utf8')).to.match(/"msg":"stopped"/);

    const after = await initScript(s, 'status');
    expect(after.code, after.out).to.equal(3);
    expect(after.out).to.include('tickd is not running');
    const again = await initScript(s, 'stop');
    expect(again.code, again.out).to.equal(0);
  });

  it('start of a running daemon changes nothing; restart replaces it', async () => {
    const s = setup();
    expect((await initScript(s, 'start')).code).to.equal(0);
    const first = pidIn(s.pidfile);
    const second = await initScript(s, 'start');
    expect(second.code, second.out).to.equal(0);
    expect(second.out).to.include(`already running, pid ${first}`);
    expect(pidIn(s.pidfile)).to.equal(first);

    const restart = await initScript(s, 'restart');
    expect(restart.code, restart.out).to.equal(0);
    const next = pidIn(s.pidfile);
    expect(next).to.not.equal(first);
    expect(alive(first)).to.equal(false);
    expect(alive(next)).to.equal(true);
    await readyRecord(s, next);
    expect((await initScript(s, 'stop')).code).to.equal(0);
    expect(alive(next)).to.equal(false);
  });

  it('configtest reports "configuration ok", or the startup error of a bad file', async () => {
    const good = await initScript(setup(), 'configtest');
    expect(good.code, good.out).to.equal(0);
    expect(good.out).to.include('configuration ok');

    const bad = setup('[database]\nframerate = 0\n');
    const test = await initScript(bad, 'configtest');
    expect(test.code).to.equal(1);
    expect(test.out).to.match(/^tickd: config: FramerateOutOfRange: database\.framerate/m);
    // start refuses it the same way (LSB 6: not configured) and leaves nothing behind.
    const start = await initScript(bad, 'start');
    expect(start.code, start.out).to.equal(6);
    expect(start.out).to.include('FramerateOutOfRange');
    expect(existsSync(bad.pidfile)).to.equal(false);
    // restart keeps whatever runs when the new configuration is invalid.
    expect((await initScript(bad, 'restart')).code).to.equal(6);
  });

  it('start fails, with the daemon\'s error and no pidfile, when it dies while starting', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as { port: number }).port;
      const s = setup(`[controller]\nlisten = "127.0.0.1:${port}"\n[database]\npersistence = "memory"\n`);
      const start = await initScript(s, 'start');
      expect(start.code, start.out).to.equal(1);
      expect(start.out).to.include('tickd: listen: ListenError');
      expect(existsSync(s.pidfile)).to.equal(false);
      expect((await initScript(s, 'status')).code).to.equal(3);
    } finally {
      busy.close();
    }
  });

  it('never signals a process that a stale pidfile names: status 1, stop removes the file only', async () => {
    const s = setup();
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      mkdirSync(join(s.dir, 'run'));
      writeFileSync(s.pidfile, `${other.pid}\n`);
      const status = await initScript(s, 'status');
      expect(status.code, status.out).to.equal(1);
      expect(status.out).to.include('is not running, but');
      const stop = await initScript(s, 'stop');
      expect(stop.code, stop.out).to.equal(0);
      expect(existsSync(s.pidfile)).to.equal(false);
      expect(alive(other.pid!)).to.equal(true);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('reload is unsupported (3), an unknown action is a usage error (2)', async () => {
    const s = setup();
    const reload = await initScript(s, 'reload');
    expect(reload.code).to.equal(3);
    expect(reload.out).to.include('use restart');
    const bogus = await initScript(s, 'bogus');
    expect(bogus.code).to.equal(2);
    expect(bogus.out).to.match(/^Usage: .*\{start\|stop\|restart\|/m);
  });

  it('is POSIX sh and works with the system LSB functions too', async () => {
    const syntax = spawnSync('sh', ['-n', SCRIPT], { encoding: 'utf8' });
    expect(syntax.status, syntax.stderr).to.equal(0);
    const s = setup(MEMORY_CONFIG, '/lib/lsb/init-functions');
    const test = await initScript(s, 'configtest', 'sh');
    expect(test.code, test.out).to.equal(0);
    const start = await initScript(s, 'start', 'sh');
    expect(start.code, start.out).to.equal(0);
    const pid = pidIn(s.pidfile);
    expect((await initScript(s, 'status', 'sh')).code).to.equal(0);
    expect((await initScript(s, 'stop', 'sh')).code).to.equal(0);
    expect(alive(pid)).to.equal(false);
  });
});

/** A systemd unit's settings, key -> values in order; a line ending in a backslash goes on. */
function unitSettings(rel: string): Map<string, string[]> {
  const unit = readFileSync(join(ROOT, rel), 'utf8').replace(/\\\n\s*/g, ' ');
  const settings = new Map<string, string[]>();
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) settings.set(m[1]!, [...(settings.get(m[1]!) ?? []), m[2]!]);
  }
  return settings;
}

function oneSetting(settings: Map<string, string[]>, key: string): string {
  expect(settings.get(key), key).to.have.length(1);
  return settings.get(key)![0]!;
}

describe('etc/default/tickd and the systemd units', () => {
  it('the defaults file documents exactly the settings the script reads', () => {
    const script = readFileSync(SCRIPT, 'utf8');
    const read = new Set([...script.matchAll(/^(?:: "\$\{(TICKD_[A-Z_]+):=|(TICKD_[A-Z_]+)=\$\{\2-)/gm)].map((m) => m[1] ?? m[2]!));
    const documented = new Set([...readFileSync(join(ROOT, 'etc/default/tickd'), 'utf8').matchAll(/^#(TICKD_[A-Z_]+)=/gm)].map((m) => m[1]!));
    expect(read.size).to.be.greaterThan(5);
    expect(documented).to.deep.equal(read);
  });

  it('the unit runs tickd in the foreground, checks first, waits for it to be ready, and stops it gracefully', () => {
    const settings = unitSettings('etc/systemd/tickd.service');
    const one = (key: string) => oneSetting(settings, key);
    // READY=1 comes from systemd-notify, a child of the daemon (cluster/service-notify.ts).
    expect(one('Type')).to.equal('notify');
    expect(one('NotifyAccess')).to.equal('all');
    expect(one('TimeoutStartSec')).to.match(/^\d+min$/);
    expect(one('KillMode')).to.equal('mixed');
    expect(one('WorkingDirectory')).to.equal('/var/lib/tickd');
    expect(one('ExecStart')).to.match(/ -c \/etc\/tickd\/tickd\.toml$/);
    expect(one('ExecStartPre')).to.match(/ --check -c \/etc\/tickd\/tickd\.toml$/);
    expect(one('Restart')).to.equal('on-failure');
    expect(one('User')).to.not.equal('root');
    expect(one('NoNewPrivileges')).to.equal('yes');
    expect(one('ProtectSystem')).to.equal('strict');
    expect(one('ReadWritePaths').split(' ')).to.include('/var/lib/tickd');
    expect(one('PrivateTmp')).to.equal('yes');
    expect(one('CapabilityBoundingSet')).to.equal('');
    expect(one('ProtectProc')).to.equal('invisible');
    // @resources stays allowed: the tick's sched_setattr and the compaction child's chrt need it.
    expect(one('SystemCallFilter')).to.equal('@system-service');
    expect(one('SystemCallErrorNumber')).to.equal('EPERM');
    // The HTTP grace alone is 5 s; the drain and the final fsync come on top.
    expect(Number(one('TimeoutStopSec'))).to.be.at.least(15);
  });

  for (const unit of ['tickd.service', 'tickd-cluster.service']) {
    it(`${unit}: systemd-analyze finds no error in it and rates its exposure 3.0 or lower`, function () {
      const version = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
      // --offline needs systemd 250 or later.
      if (version.status !== 0 || Number(/systemd (\d+)/.exec(version.stdout)?.[1] ?? 0) < 250) this.skip();
      // verify wants the executables to exist: a copy runs /bin/true instead.
      const dir = tempDir('tickd-unit-');
      const copy = join(dir, unit);
      writeFileSync(copy, readFileSync(join(ROOT, 'etc/systemd', unit), 'utf8').replaceAll('/usr/local/bin/tickd', '/bin/true'));
      const verify = spawnSync('systemd-analyze', ['verify', '--man=no', copy], { encoding: 'utf8' });
      expect(verify.status, verify.stderr).to.equal(0);
      expect(verify.stderr).to.equal('');
      const security = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', copy], { encoding: 'utf8' });
      expect(security.status, security.stderr).to.equal(0);
      const score = /Overall exposure level for \S+: (\d+\.\d+)/.exec(security.stdout);
      expect(score, security.stdout).to.not.equal(null);
      expect(Number(score![1])).to.be.at.most(3.0);
    });
  }

  it('the cluster unit is the same unit with the cluster flags, after a local NATS, with time to hand over', () => {
    const plain = unitSettings('etc/systemd/tickd.service');
    const settings = unitSettings('etc/systemd/tickd-cluster.service');
    const one = (key: string) => oneSetting(settings, key);
    // Everything but the command line, the ordering and the description is tickd.service's.
    const own = new Set(['ExecStart', 'After', 'Wants', 'Conflicts', 'Description']);
    for (const [key, values] of plain) if (!own.has(key)) expect(settings.get(key), key).to.deep.equal(values);
    for (const key of settings.keys()) expect(plain.has(key) || own.has(key), `${key} only in the cluster unit`).to.equal(true);
    const [bin, ...args] = one('ExecStart').split(/\s+/);
    expect(bin).to.equal(oneSetting(plain, 'ExecStart').split(' ')[0]);
    const action = parseCli(args);
    expect(action.mode).to.equal('run');
    const cluster = action.mode === 'run' ? action.cluster : null;
    expect(cluster, 'ExecStart runs a cluster node').to.not.equal(null);
    expect(cluster!.urls, 'every NATS server of the cluster').to.have.length(3);
    expect(args.slice(0, 2)).to.deep.equal(['-c', '/etc/tickd/tickd.toml']);
    expect(one('After').split(' ')).to.include.members(['network-online.target', 'nats-server.service']);
    expect(one('Wants').split(' ')).to.include('nats-server.service');
    expect(one('Conflicts')).to.equal('tickd.service');
    // The HTTP grace (5 s) and a leader's last writes (given up after 10 s) before the lease is released.
    expect(Number(one('TimeoutStopSec'))).to.be.at.least(20);
  });
});
