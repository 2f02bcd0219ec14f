// The npm package (README.md, Install from a package): `npm pack` makes a tarball of only what
// runs (bin/tickd, the JavaScript .ci/build-dist.ts compiles into dist/, the manual pages, the
// samples of etc/; no TypeScript, tests or benchmarks), and `npm install -g` of it into a temp
// prefix gives a tickd that works on Node 24: --version, --check on the shipped sample, the
// daemon (its workers and compaction child forked from dist/) answering SET and GET over TCP
// and serving /ui/, `tickd ctl`, `tickd dump`; and manual pages that man(1) renders. On an
// older Node the installed tickd prints one line naming the Node it needs and exits 1. The
// package also exports the client library (doc/client.md): a program run by that older Node,
// in a project that installed the tarball, imports it and talks to the installed daemon, and
// a TypeScript consumer typechecks against its declarations.
//
// The pack runs in a copy of the working tree (its files as git lists them, node_modules linked
// in), so that a test run never writes dist/ into the clone another run may be packing.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'smol-toml';
import { buildConfig, parseAddress, type Address } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { childrenRunning, descendantsRunning } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; man: string[] };
/** The project's Node 24 (the `node` devDependency): what the installed tickd runs on here. */
const NODE24 = join(ROOT, 'node_modules', 'node', 'bin', 'node');
const SHIPPED = /^(?:package\.json|README\.md|bin\/tickd|dist\/|man\/|etc\/)/;

const running = new Set<ChildProcess>();
process.on('exit', () => { for (const p of running) p.kill('SIGKILL'); });

/** The environment of a command run from here, without what an outer `npm test` set for npm. */
function cleanEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^npm_/i.test(k) && !k.startsWith('TICKD_')) env[k] = v;
  return { ...env, ...extra };
}

function run(file: string, args: readonly string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(file, args, { cwd: opts.cwd, env: opts.env ?? cleanEnv(), encoding: 'utf8', timeout: opts.timeoutMs ?? 20_000 });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The working tree's files (tracked or new, not ignored) copied to a temp dir, node_modules linked. */
function copyOfTree(): string {
  const copy = tempDir('tickd-pack-src-');
  const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT });
  expect(listed.code, listed.stderr).to.equal(0);
  for (const rel of listed.stdout.split('\0')) {
    if (rel === '' || !existsSync(join(ROOT, rel))) continue; // deleted in the working tree
    mkdirSync(dirname(join(copy, rel)), { recursive: true });
    cpSync(join(ROOT, rel), join(copy, rel));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

/** An installed Node older than 24 on PATH (the machine's own), not the project's. */
function olderNode(): { path: string; version: string } | null {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const path = join(dir, 'node');
    if (dir === '' || dir.includes('node_modules') || !existsSync(path)) continue;
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
    if (/^v\d+\./.test(version) && Number(version.slice(1).split('.')[0]) < 24) return { path, version };
  }
  return null;
}

/** The installed daemon on Node 24, started on ephemeral ports; resolves at its "ready" line. */
async function startInstalled(bin: string, dir: string): Promise<{ proc: ChildProcess; tcp: Address; http: Address; stderr: string[] }> {
  const config = join(dir, 'tickd.toml');
  writeFileSync(config, stringify(buildConfig(dir, { database: { persistence: 'logfile', compression_interval: 1 }, http: { listen: '127.0.0.1:0' } })));
  const proc = spawn(NODE24, [bin, '-c', config, '-w', '1'], { cwd: dir, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(proc);
  proc.on('exit', () => running.delete(proc));
  const stderr: string[] = [];
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`no "ready" in 15 s; stderr:\n${stderr.join('\n')}`)), 15_000);
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`tickd exited ${code}; stderr:\n${stderr.join('\n')}${buf}`)); });
    proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        stderr.push(line);
        try {
          const rec = JSON.parse(line) as Record<string, unknown>;
          if (rec['msg'] === 'ready') { clearTimeout(timer); resolve(rec); }
        } catch { /* not a log record */ }
      }
    });
  });
  return { proc, tcp: parseAddress(String(ready['tcp'])), http: parseAddress(String(ready['http'])), stderr };
}

describe('npm package', function () {
  this.timeout(60_000);
  let files: string[] = [];
  let prefix = '';
  let bin = '';
  let pkgDir = '';
  let tarball = '';

  before(function () {
    this.timeout(180_000); // the install fetches what the npm cache lacks
    const out = tempDir('tickd-pack-');
    const packed = run('npm', ['pack', '--json', '--pack-destination', out], { cwd: copyOfTree(), timeoutMs: 120_000 });
    expect(packed.code, packed.stderr).to.equal(0);
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    files = info!.files.map((f) => f.path).sort();
    prefix = tempDir('tickd-prefix-');
    tarball = join(out, info!.filename);
    const args = ['install', '--global', '--prefix', prefix, tarball, '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'];
    const installed = run('npm', args, { timeoutMs: 150_000 });
    expect(installed.code, installed.stderr).to.equal(0);
    bin = join(prefix, 'bin', 'tickd');
    pkgDir = join(prefix, 'lib', 'node_modules', 'tickd');
  });

  it('ships only what runs: the launcher, the compiled JavaScript, the manual pages and the samples', () => {
    expect(files.filter((f) => !SHIPPED.test(f))).to.deep.equal([]);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).to.deep.equal([]);
    expect(files).to.include.members([
      'bin/tickd', 'dist/package.json', 'dist/cluster/main.js', 'dist/cluster/worker.js', 'dist/cluster/fold-child.js', 'dist/cluster/runner-child.js',
      'dist/lib/client/index.js', 'dist/lib/client/index.d.ts', 'dist/lib/http/ui/console/index.html', 'dist/lib/http/ui/docs/index.html', 'etc/tickd.toml', 'etc/systemd/tickd.service',
      ...PKG.man.map((m) => m.replace(/^\.\//, '')),
    ]);
  });

  it('runs on Node 24: --version, and --check on the shipped sample through its #! line', () => {
    expect(run(NODE24, [bin, '--version'])).to.deep.equal({ code: 0, stdout: `tickd ${PKG.version} (time zone database ${process.versions.tz})\n`, stderr: '' });
    const env = cleanEnv({ PATH: `${dirname(NODE24)}${delimiter}${process.env['PATH'] ?? ''}` });
    expect(run(bin, ['--check', '-c', join(pkgDir, 'etc', 'tickd.toml')], { env })).to.deep.equal({ code: 0, stdout: 'configuration ok\n', stderr: '' });
  });

  it('starts the daemon, which answers over TCP and HTTP and stops on SIGTERM; ctl and dump work', async () => {
    const dir = tempDir();
    const daemon = await startInstalled(bin, dir);
    let exited: Promise<number | null> | null = null;
    try {
      // The worker, the runner child (forked at the first rule) and the compaction child (for
      // a cycle, every second here) run the compiled modules.
      expect(childrenRunning(daemon.proc.pid!, join('dist', 'cluster', 'worker.js'))).to.have.length(1);
      const c = await LineClient.connect(daemon.tcp);
      expect(await c.request('r0', 'RULE SET pkg.rule pkg. shell "true"')).to.deep.equal(['r0 OK']);
      expect(childrenRunning(daemon.proc.pid!, join('dist', 'cluster', 'runner-child.js'))).to.have.length(1);
      await waitFor(() => descendantsRunning(daemon.proc.pid!, join('dist', 'cluster', 'fold-child.js')).length === 1, 10_000, 'the fold child'); // the spawner's child
      expect(await c.request('r1', 'SET pkg.job 2030-01-01 03:00:00')).to.deep.equal(['r1 OK']);
      expect(await c.request('r2', 'GET pkg.job')).to.deep.equal(['r2 OK planned 1893466800000000000']);
      c.close();
      const ui = await fetch(`http://${daemon.http.host}:${daemon.http.port}/ui/`);
      expect(ui.status).to.equal(200);
      expect(await ui.text()).to.include('<html');
      const ctl = run(NODE24, [bin, 'ctl', '--addr', `${daemon.tcp.host}:${daemon.tcp.port}`, '--json', 'job', 'get', 'pkg.job']);
      expect(ctl.code, ctl.stderr).to.equal(0);
      expect(ctl.stdout).to.include('"pkg.job"').and.include('1893466800000000000');
      exited = new Promise((resolve) => daemon.proc.once('exit', (code) => resolve(code)));
      daemon.proc.kill('SIGTERM');
      expect(await exited, daemon.stderr.join('\n')).to.equal(0);
    } finally {
      if (exited === null) daemon.proc.kill('SIGKILL');
    }
    const dump = run(NODE24, [bin, 'dump', join(dir, 'logfile')]);
    expect(dump.code, dump.stderr).to.equal(0);
    expect(dump.stdout.split('\n').filter((l) => l.includes('pkg.job'))).to.deep.equal(['planned SET pkg.job 1893466800000000000']);
  });

  it('on an older Node, prints the Node it needs in one line and exits 1', function () {
    const old = olderNode();
    if (old === null) this.skip(); // no Node older than 24 on PATH
    expect(run(old!.path, [bin, '--version'])).to.deep.equal({ code: 1, stdout: '', stderr: `tickd: needs Node.js 24 (this is ${old!.version})\n` });
  });

  it('exports the client: a program on the older Node imports it from the installed tarball; TypeScript reads its declarations', async function () {
    const old = olderNode();
    if (old === null) this.skip(); // no Node older than 24 on PATH
    this.timeout(180_000); // the install fetches what the npm cache lacks
    const project = tempDir('tickd-consumer-');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    const installed = run('npm', ['install', tarball, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, timeoutMs: 150_000 });
    expect(installed.code, installed.stderr).to.equal(0);
    writeFileSync(join(project, 'main.mjs'), [
      "import { connect, isoFromNs, ReplyError } from 'tickd';",
      'const c = await connect({ addresses: process.argv[2] });',
      "await c.set('n20.job', new Date('2030-01-01T03:00:00Z'));",
      "const job = await c.get('n20.job');",
      'const listed = [];',
      "for await (const j of c.listJobs('n20.')) listed.push(`${j.id} ${j.status} ${j.execution}`);",
      "const refused = await c.set('bad id', 0n).catch((e) => `${e instanceof ReplyError} ${e.code}`);",
      'await c.close();',
      'console.log(JSON.stringify({ node: process.version, iso: isoFromNs(job.execution), listed, refused }));',
    ].join('\n'));
    const daemon = await startInstalled(bin, tempDir());
    try {
      const r = run(old!.path, ['main.mjs', `${daemon.tcp.host}:${daemon.tcp.port}`], { cwd: project });
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.deep.equal({
        node: old!.version, iso: '2030-01-01T03:00:00Z', listed: ['n20.job planned 1893466800000000000'], refused: 'true invalid_args',
      });
    } finally {
      daemon.proc.kill('SIGKILL');
    }
    writeFileSync(join(project, 'consumer.ts'), [
      "import { connect, type Job, type TickdError } from 'tickd';",
      "const c = await connect({ addresses: ['127.0.0.1:5678'], timeout: 1000 });",
      "const job: Job | null = await c.get('x');",
      'const when: bigint | undefined = job?.execution;',
      "const code: string = ({} as TickdError).code;",
      'console.log(when, code);',
    ].join('\n'));
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')] },
      files: ['consumer.ts'],
    }));
    const tsc = run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project, timeoutMs: 60_000 });
    expect(tsc, tsc.stdout).to.deep.include({ code: 0 });
  });

  it('installs the manual pages, which man(1) renders', function () {
    if (spawnSync('man', ['--version']).status !== 0) this.skip(); // man-db not installed
    for (const page of PKG.man) {
      const name = page.slice(page.lastIndexOf('/') + 1);
      const installed = join(prefix, 'share', 'man', `man${name.slice(name.lastIndexOf('.') + 1)}`, name);
      const r = run('man', ['-l', installed], { env: cleanEnv({ MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '80' }) });
      expect(r.code, `${installed}: ${r.stderr}`).to.equal(0);
      expect(r.stdout, installed).to.match(/^NAME\n {7}tickd/m);
    }
  });
});
