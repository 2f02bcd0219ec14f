// `tickd ctl job import` and `job export` against real daemons
// (tickd-ctl(1) "IMPORT AND EXPORT"): a file of good and bad lines (what is imported, which line numbers are reported,
// the summary and the exit status), stdin, errors found by the daemon, the order of repeated
// identifiers, and `export | import` copying a namespace between two daemons.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Daemon, TICKD } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { addrOf, ctl, ctlEnv } from '../helpers/ctl.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKENS = fileURLToPath(new URL('../fixtures/auth/tokens.toml', import.meta.url));
const FAR = 1_893_466_800_000_000_000n; // 2030-01-01T03:00:00Z

/** QUERY PREFIX as sorted `id status ns` lines. */
async function jobs(c: LineClient, prefix: string): Promise<string[]> {
  const lines = await c.request('q', `QUERY ${prefix}`);
  return lines.slice(0, -1).map((l) => l.slice(2)).sort();
}

describe('tickd ctl job import / export', function () {
  this.timeout(60_000);
  let src: Daemon;
  let dst: Daemon;
  let auth: Daemon;
  let c: LineClient;
  let d: LineClient;
  let dir: string;

  before(async () => {
    [src, dst, auth] = await Promise.all([Daemon.start(), Daemon.start(), Daemon.start({ config: { controller: { auth_file: TOKENS } } })]);
    [c, d] = await Promise.all([LineClient.connect(src.tcp), LineClient.connect(dst.tcp)]);
    dir = tempDir();
  });
  after(async () => {
    c?.close();
    d?.close();
    await Promise.all([src, dst, auth].map((x) => x?.stop()));
  });

  it('a file of good and bad lines: the good ones go in, each bad one is reported with its line number', async () => {
    const file = join(dir, 'mixed.txt');
    writeFileSync(file, [
      `imp.a ${FAR}`, //                       1
      'imp.b\t2030-01-01 03:00:00', //          2
      '', //                                    3 blank
      '# a comment', //                         4
      'imp/c 5', //                             5 bad identifier
      'imp.d soon', //                          6 bad WHEN
      `{"id":"imp.e","execution":${FAR + 7n}}`, // 7 JSON, exact
      '{"id":"imp.f",', //                      8 broken JSON
      'imp.g', //                               9 no WHEN
      `imp.h 2030-01-01T03:00:00.000000009Z`, // 10
      `imp.i ${'9'.repeat(5000)}`, //          11 longer than a line may be
      `imp.j ${FAR}`, //                        12, no final newline
    ].join('\n'));
    const r = await ctl(['--addr', addrOf(src.tcp), 'job', 'import', file]);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    const errors = r.stderr.trimEnd().split('\n');
    expect(errors[2]).to.match(/^tickd ctl: line 8: not valid JSON: /); // the parser's own words follow
    errors[2] = 'tickd ctl: line 8: not valid JSON';
    expect(errors.slice(0, -1)).to.deep.equal([
      'tickd ctl: line 5: job identifier contains invalid character \'/\' (allowed: letters, digits, . - _ :)',
      'tickd ctl: line 6: invalid WHEN "soon": expected integer nanoseconds, "YYYY-MM-DD HH:MM:SS" (UTC), RFC 3339 with a zone, now, +DURATION or now-DURATION (30s, 5m, 2h, 1h30m)',
      'tickd ctl: line 8: not valid JSON',
      'tickd ctl: line 9: expected ID WHEN',
      'tickd ctl: line 11: longer than 4096 bytes',
    ]);
    expect(errors.at(-1)).to.equal('tickd ctl: imported 5 jobs from 12 lines; 5 lines failed; 2 blank or comment lines');
    expect(await jobs(c, 'imp.')).to.deep.equal([
      `imp.a planned ${FAR}`, `imp.b planned ${FAR}`, `imp.e planned ${FAR + 7n}`, `imp.h planned ${FAR + 9n}`, `imp.j planned ${FAR}`,
    ].sort());
  });

  it('--json: the summary as one JSON object on stdout; exit 0 when every line went in', async () => {
    const r = await ctl(['--addr', addrOf(src.tcp), 'job', 'import', '--json'], { stdin: `js.a ${FAR}\njs.b +1h\n\n` });
    expect(r).to.deep.equal({ code: 0, stdout: '{"lines":3,"imported":2,"failed":0,"skipped":1}\n', stderr: '' });
  });

  it('reads stdin (also as -); relative times count from the start of the import', async () => {
    const t0 = BigInt(Date.now()) * 1_000_000n;
    const r = await ctl(['--addr', addrOf(src.tcp), 'job', 'import', '-'], { stdin: 'rel.a +1h\nrel.b +1h\n' });
    expect(r.stderr).to.equal('tickd ctl: imported 2 jobs from 2 lines\n');
    const [a, b] = (await jobs(c, 'rel.')).map((l) => BigInt(l.split(' ')[2]!));
    expect(a).to.equal(b);
    expect(a! - t0 >= 3_600_000_000_000n && a! - t0 < 3_660_000_000_000n).to.equal(true);
  });

  it('lines the daemon refuses are reported with their line numbers too', async () => {
    const r = await ctl(['--addr', addrOf(auth.tcp), 'job', 'import'], { env: { TICKD_TOKEN: 'secret-a' }, stdin: `a.1 ${FAR}\nb.2 ${FAR}\na.3 ${FAR}\nb.4 ${FAR}\n` });
    expect(r.code).to.equal(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.slice(0, -1).sort()).to.deep.equal([
      'tickd ctl: line 2: auth_denied: insufficient namespace scope',
      'tickd ctl: line 4: auth_denied: insufficient namespace scope',
    ]);
    expect(lines.at(-1)).to.equal('tickd ctl: imported 2 jobs from 4 lines; 2 lines failed');
  });

  it('a job given several times ends with its last line\'s time, whatever the connections', async () => {
    const text = Array.from({ length: 3000 }, (_, i) => `dup.${i % 100} ${FAR + BigInt(i)}\n`).join('');
    expect((await ctl(['--addr', addrOf(src.tcp), 'job', 'import'], { stdin: text })).code).to.equal(0);
    const got = await jobs(c, 'dup.');
    expect(got).to.have.length(100);
    for (const line of got) {
      const [id, , ns] = line.split(' ');
      expect(BigInt(ns!) - FAR, id).to.equal(2900n + BigInt(id!.slice(4)));
    }
  });

  it('a missing file is a usage error; no daemon is a connection error', async () => {
    const missing = await ctl(['--addr', addrOf(src.tcp), 'job', 'import', join(dir, 'nope.txt')]);
    expect(missing).to.deep.equal({ code: 2, stdout: '', stderr: `tickd ctl: cannot read ${join(dir, 'nope.txt')}: ENOENT\n` });
    const gone = await ctl(['--addr', '127.0.0.1:1', 'job', 'import'], { stdin: `x.1 ${FAR}\n` });
    expect(gone.code).to.equal(3);
    expect(gone.stderr).to.match(/^tickd ctl: cannot connect to 127\.0\.0\.1:1: .*ECONNREFUSED/);
  });

  describe('export | import between two daemons', () => {
    before(async () => {
      for (let i = 0; i < 50; i++) await c.request('s', `SET ns.job.${i} ${FAR + BigInt(i)}`);
      await c.request('s', `SET other.x ${FAR}`);
      // A job that has run: executed (direct /bin/true), in the past.
      expect(await c.request('r', 'RULE SET ns.done ns.done direct /bin/true')).to.deep.equal(['r OK']);
      expect(await c.request('s', 'SET ns.done.1 1000')).to.deep.equal(['s OK']);
      await waitFor(async () => (await c.request('g', 'GET ns.done.1'))[0]!.startsWith('g OK executed'), 10_000, 'ns.done.1 executed');
    });

    it('export writes ID NANOSECONDS lines, leaving out executed and failed jobs unless --all', async () => {
      const out = (await ctl(['--addr', addrOf(src.tcp), 'job', 'export', 'ns.'])).stdout.trimEnd().split('\n').sort();
      expect(out).to.have.length(50);
      expect(out).to.include(`ns.job.7 ${FAR + 7n}`);
      const all = (await ctl(['--addr', addrOf(src.tcp), 'job', 'export', 'ns.', '--all'])).stdout;
      expect(all).to.include('ns.done.1 1000\n');
      const json = (await ctl(['--addr', addrOf(src.tcp), 'job', 'export', 'ns.job.1', '--json'])).stdout.trimEnd().split('\n');
      expect(json).to.include(`{"id":"ns.job.1","execution":${FAR + 1n},"status":"planned"}`);
    });

    it('a shell pipe copies the namespace: same jobs, same exact times, nothing else', async () => {
      const tickd = `"${process.execPath}" "${TICKD}" ctl`;
      const pipe = `set -o pipefail; ${tickd} --addr ${addrOf(src.tcp)} job export ns. | ${tickd} --addr ${addrOf(dst.tcp)} job import`;
      const r = spawnSync('bash', ['-c', pipe], { encoding: 'utf8', env: ctlEnv() });
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stderr).to.equal('tickd ctl: imported 50 jobs from 50 lines\n');
      expect(await jobs(d, '')).to.deep.equal(await jobs(c, 'ns.job.'));
    });

    it('the JSON lines of export --json import the same way', async () => {
      const exported = (await ctl(['--addr', addrOf(src.tcp), 'job', 'export', 'other.', '--json'])).stdout;
      expect(await ctl(['--addr', addrOf(dst.tcp), 'job', 'import', '--json'], { stdin: exported })).to.deep.include({ code: 0, stdout: '{"lines":1,"imported":1,"failed":0,"skipped":0}\n' });
      expect(await jobs(d, 'other.')).to.deep.equal([`other.x planned ${FAR}`]);
    });
  });
});
