// `tickd ctl` against the real daemon, plaintext and without authentication
// (tickd-ctl(1) COMMANDS, OUTPUT, EXIT STATUS): every command in every output format, relative and absolute
// times converted to exact nanoseconds, one exit status per class of error, several addresses,
// timeouts, and stdout holding nothing but the data.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { STAT_KEYS } from '../../lib/domain/stat.ts';
import { Daemon, TICKD } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';
import { addrOf, ctl, ctlEnv } from '../helpers/ctl.ts';

const S = 1_000_000_000n;
const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** A JSON document with every integer kept exact (as a bigint when it is too big for a number). */
function exactJson(text: string): unknown {
  return (JSON.parse as (t: string, r: (k: string, v: unknown, c: { source?: string }) => unknown) => unknown)(text, (_k, v, c) =>
    (typeof v === 'number' && c.source !== undefined && /^-?\d{16,}$/.test(c.source) ? BigInt(c.source) : v));
}

/** A server that accepts and never answers; or answers every line with `reply`. */
async function fakeServer(reply: string | null): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    if (reply !== null) s.on('data', () => s.write(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, sockets };
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const { server, port } = await fakeServer(null);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('tickd ctl (plaintext)', function () {
  this.timeout(60_000);
  let daemon: Daemon;
  let client: LineClient;
  let A: string[];

  before(async () => {
    daemon = await Daemon.start({ workers: 1 });
    client = await LineClient.connect(daemon.tcp);
    A = ['--addr', addrOf(daemon.tcp)];
  });
  after(async () => {
    client?.close();
    await daemon?.stop();
  });

  describe('job set and WHEN', () => {
    it('relative times are converted on the client to exact nanoseconds', async () => {
      const before = nowNs();
      const r = await ctl([...A, 'job', 'set', 'rel.a', '+30s', '--json']);
      const after = nowNs();
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.equal('');
      const doc = exactJson(r.stdout) as { id: string; status: string; execution: bigint };
      expect(doc).to.include({ id: 'rel.a', status: 'planned' });
      expect(doc.execution >= before + 30n * S - 1_000_000n && doc.execution <= after + 30n * S + 1_000_000n, String(doc.execution)).to.equal(true);
      expect(await client.request('g', 'GET rel.a')).to.deep.equal([`g OK planned ${doc.execution}`]);
      for (const [when, lo, hi] of [['+5m', 300n, 300n], ['+2h', 7200n, 7200n], ['now', 0n, 0n], ['now-1h30m', -5400n, -5400n]] as const) {
        const t0 = nowNs();
        const j = exactJson((await ctl([...A, 'job', 'set', 'rel.b', when, '--json'])).stdout) as { execution: bigint };
        expect(j.execution >= t0 + lo * S - 1_000_000n && j.execution <= nowNs() + hi * S + 1_000_000n, `${when}: ${j.execution}`).to.equal(true);
      }
    });

    it('absolute forms: nanoseconds, YYYY-MM-DD HH:MM:SS (one word or two), RFC 3339 with a zone', async () => {
      const cases: Array<[string[], string]> = [
        [['1893466800123456789'], '1893466800123456789'],
        [['2030-01-01 03:00:00'], '1893466800000000000'],
        [['2030-01-01', '03:00:00'], '1893466800000000000'],
        [['2030-01-01T05:00:00.000000007+02:00'], '1893466800000000007'],
      ];
      for (const [when, ns] of cases) {
        const r = await ctl([...A, 'job', 'set', 'abs.x', ...when]);
        expect(r.code, r.stderr).to.equal(0);
        expect((await client.request('g', 'GET abs.x'))[0]).to.equal(`g OK planned ${ns}`);
      }
    });

    it('the table shows the time as RFC 3339 with its nanoseconds, no colour off a terminal', async () => {
      const r = await ctl([...A, 'job', 'set', 'tab.a', '1893466800123456789']);
      expect(r.stdout).to.equal('ID     STATUS   EXECUTION\ntab.a  planned  2030-01-01T03:00:00.123456789Z\n');
      expect(r.stdout).to.not.include('\x1b');
    });

    it('--raw prints the protocol answer', async () => {
      expect((await ctl([...A, 'job', 'set', 'raw.a', 'now', '--raw'])).stdout).to.equal('OK\n');
    });
  });

  describe('job get, ls, rm', () => {
    before(async () => {
      for (const [id, ns] of [['ls.b', '1893466800000000002'], ['ls.a', '1893466800000000001'], ['other.c', '1893466800000000003']]) {
        expect(await client.request('s', `SET ${id} ${ns}`)).to.deep.equal(['s OK']);
      }
    });

    it('get: table, --json and --raw', async () => {
      // Not run yet: no attempt recorded (ctl-retries.test.ts has jobs that ran).
      expect((await ctl([...A, 'job', 'get', 'ls.a'])).stdout).to.equal(
        'ID    STATUS   EXECUTION                       ATTEMPTS  LAST OUTCOME\nls.a  planned  2030-01-01T03:00:00.000000001Z  0         -\n');
      expect((await ctl([...A, 'job', 'get', 'ls.a', '--json'])).stdout).to.equal('{"id":"ls.a","status":"planned","execution":1893466800000000001,"attempts":[]}\n');
      expect((await ctl([...A, 'job', 'get', 'ls.a', '--raw'])).stdout).to.equal('OK planned 1893466800000000001\nOK\n');
    });

    it('get of a missing job: nothing on stdout, the code and message on stderr, exit 1', async () => {
      for (const format of [[], ['--json'], ['--raw']]) {
        const r = await ctl([...A, 'job', 'get', 'no.such', ...format]);
        expect(r).to.deep.equal({ code: 1, stdout: '', stderr: 'tickd ctl: not_found: job "no.such" does not exist\n' });
      }
    });

    it('ls PREFIX: table, a JSON array with exact integers, raw lines', async () => {
      const table = (await ctl([...A, 'job', 'ls', 'ls.'])).stdout.split('\n');
      expect(table[0]).to.equal('ID    STATUS   EXECUTION');
      expect(table.slice(1, -1).sort()).to.deep.equal(['ls.a  planned  2030-01-01T03:00:00.000000001Z', 'ls.b  planned  2030-01-01T03:00:00.000000002Z']);
      const json = exactJson((await ctl([...A, 'job', 'ls', 'ls.', '--json'])).stdout) as Array<{ id: string; execution: bigint }>;
      expect(json.map((j) => [j.id, j.execution]).sort()).to.deep.equal([['ls.a', 1893466800000000001n], ['ls.b', 1893466800000000002n]]);
      const raw = (await ctl([...A, 'job', 'ls', 'ls.', '--raw'])).stdout.split('\n');
      expect(raw.slice(0, 2).sort()).to.deep.equal(['ls.a planned 1893466800000000001', 'ls.b planned 1893466800000000002']);
      expect(raw.slice(2)).to.deep.equal(['OK', '']);
    });

    it('ls of an empty prefix prints nothing in a table, [] in JSON', async () => {
      expect(await ctl([...A, 'job', 'ls', 'nothing.here'])).to.deep.equal({ code: 0, stdout: '', stderr: '' });
      expect((await ctl([...A, 'job', 'ls', 'nothing.here', '--json'])).stdout).to.equal('[]\n');
    });

    it('rm: every id in one pipelined go; a missing one is reported and gives exit 1', async () => {
      await client.request('s', 'SET rm.a 1');
      await client.request('s', 'SET rm.b 1');
      const r = await ctl([...A, 'job', 'rm', 'rm.a', 'rm.missing', 'rm.b', '--json']);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal('{"removed":["rm.a","rm.b"]}\n');
      expect(r.stderr).to.equal('tickd ctl: rm.missing: not_found: job "rm.missing" does not exist\n');
      expect((await client.request('g', 'GET rm.a'))[0]).to.match(/^g ERROR not_found/);
      expect(await ctl([...A, 'job', 'rm', 'ls.b'])).to.deep.equal({ code: 0, stdout: '', stderr: '' });
    });
  });

  describe('rules', () => {
    it('rule set takes the runner as separate words and quotes them itself', async () => {
      const r = await ctl([...A, 'rule', 'set', 'r.shell', 'r.', 'shell', 'echo "a b" \\ $TICKD_JOB_ID']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('ID       PATTERN  RUNNER\nr.shell  r.       shell "echo \\"a b\\" \\\\ $TICKD_JOB_ID"\n');
      // Options go before RUNNER: the words after it are the runner's, whatever they look like.
      expect((await ctl([...A, '--json', 'rule', 'set', 'r.direct', 'r.d', 'direct', '/bin/echo', '-n', 'two words'])).stdout)
        .to.equal('{"id":"r.direct","pattern":"r.d","runner":{"type":"direct","executable":"/bin/echo","args":["-n","two words"]}}\n');
      expect((await ctl([...A, '--raw', 'rule', 'set', 'r.awf', '', 'awf', 'wf', '--input', 'k=v w'])).stdout).to.equal('OK\n');
      const listed = await client.request('l', 'LISTRULES');
      expect(listed).to.include('l r.shell r. shell "echo \\"a b\\" \\\\ $TICKD_JOB_ID"');
      expect(listed).to.include('l r.awf "" awf wf --input "k=v w"');
    });

    it('rule ls: table, JSON objects of every kind, raw lines that paste back as RULE SET', async () => {
      const table = (await ctl([...A, 'rule', 'ls', 'r.'])).stdout;
      expect(table.split('\n')[0]).to.match(/^ID {8}PATTERN {2}RUNNER$/);
      expect(table).to.include('r.awf     ""       awf wf --input "k=v w"');
      const json = JSON.parse((await ctl([...A, 'rule', 'ls', 'r.a', '--json'])).stdout) as unknown[];
      expect(json).to.deep.equal([{ id: 'r.awf', pattern: '', runner: { type: 'awf', workflow: 'wf', inputs: ['k=v w'] } }]);
      const raw = (await ctl([...A, 'rule', 'ls', 'r.direct', '--raw'])).stdout;
      expect(raw).to.equal('r.direct r.d direct /bin/echo -n "two words"\nOK\n');
      expect(await client.request('p', `RULE SET ${raw.split('\n')[0]!.replace('r.direct', 'r.pasted')}`)).to.deep.equal(['p OK']);
    });

    it('a runner the daemon would refuse is a usage error here, before connecting', async () => {
      const r = await ctl(['--addr', '127.0.0.1:1', 'rule', 'set', 'x', 'x.', 'redis', 'redis://h', 'DEL', 'k']);
      expect(r).to.deep.include({ code: 2, stdout: '' });
      expect(r.stderr).to.equal('tickd ctl: redis command "DEL" is not one of PUBLISH, RPUSH, LPUSH, SET (case-sensitive)\n');
    });

    it('rule rm', async () => {
      expect(await ctl([...A, 'rule', 'rm', 'r.pasted', 'r.awf'])).to.deep.equal({ code: 0, stdout: '', stderr: '' });
      const r = await ctl([...A, 'rule', 'rm', 'r.awf']);
      expect(r).to.deep.equal({ code: 1, stdout: '', stderr: 'tickd ctl: r.awf: not_found: rule "r.awf" does not exist\n' });
    });
  });

  describe('stat and ping', () => {
    it('stat: the 15 keys as a table, one JSON object, raw lines', async () => {
      const table = (await ctl([...A, 'stat'])).stdout.split('\n');
      expect(table[0]).to.match(/^KEY +VALUE$/);
      expect(table.slice(1, -1).map((l) => l.split(/ +/)[0])).to.deep.equal([...STAT_KEYS]);
      const json = JSON.parse((await ctl([...A, 'stat', '--json'])).stdout) as Record<string, unknown>;
      expect(Object.keys(json)).to.deep.equal([...STAT_KEYS]);
      expect(json).to.include({ persistence: 'memory', auth_enabled: 0, tls_enabled: 0, framerate: 512 });
      const raw = (await ctl([...A, 'stat', '--raw'])).stdout.split('\n');
      expect(raw).to.have.length(STAT_KEYS.length + 2);
      expect(raw.at(-2)).to.equal('OK');
    });

    it('ping exits 0 and says how long the answer took', async () => {
      const r = await ctl([...A, 'ping']);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.match(new RegExp(`^${addrOf(daemon.tcp)} answered in \\d+\\.\\d\\d ms\\n$`));
      const j = JSON.parse((await ctl([...A, 'ping', '--json'])).stdout) as { addr: string; ms: number };
      expect(j.addr).to.equal(addrOf(daemon.tcp));
      expect(j.ms).to.be.a('number').and.to.be.greaterThan(0);
    });
  });

  describe('addresses, environment and exit status 3', () => {
    it('TICKD_ADDR is read; --addr wins over it', async () => {
      expect((await ctl(['ping', '--raw'], { env: { TICKD_ADDR: addrOf(daemon.tcp) } })).stdout).to.equal('OK\n');
      const r = await ctl(['--addr', `127.0.0.1:${await closedPort()}`, 'ping'], { env: { TICKD_ADDR: addrOf(daemon.tcp) } });
      expect(r.code).to.equal(3);
    });

    it('several addresses are tried in order: the first that answers serves', async () => {
      const dead = await closedPort();
      const r = await ctl(['--addr', `127.0.0.1:${dead},${addrOf(daemon.tcp)}`, 'ping', '--json']);
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.have.property('addr', addrOf(daemon.tcp));
    });

    it('nothing answers: exit 3, one line naming every address', async () => {
      const [p1, p2] = [await closedPort(), await closedPort()];
      const r = await ctl(['--addr', `127.0.0.1:${p1},127.0.0.1:${p2}`, 'job', 'get', 'x']);
      expect(r.code).to.equal(3);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trimEnd().split('\n')).to.have.length(1);
      expect(r.stderr).to.match(new RegExp(`^tickd ctl: cannot connect to any address: 127\\.0\\.0\\.1:${p1}: .*ECONNREFUSED.*; 127\\.0\\.0\\.1:${p2}: .*ECONNREFUSED`));
    });

    it('a daemon that does not answer in --timeout: exit 3, one line', async () => {
      const silent = await fakeServer(null);
      try {
        const t0 = Date.now();
        const r = await ctl(['--addr', `127.0.0.1:${silent.port}`, '--timeout', '300ms', 'stat']);
        expect(r).to.deep.include({ code: 3, stdout: '' });
        expect(r.stderr).to.equal(`tickd ctl: no answer from 127.0.0.1:${silent.port} within 300 ms\n`);
        expect(Date.now() - t0).to.be.lessThan(10_000);
      } finally {
        for (const s of silent.sockets) s.destroy();
        silent.server.close();
      }
    });

    it('an answer that is not the protocol: exit 3, no stack trace', async () => {
      const odd = await fakeServer('HTTP/1.1 400 Bad Request\r\n\r\n');
      try {
        const r = await ctl(['--addr', `127.0.0.1:${odd.port}`, 'job', 'get', 'x']);
        expect(r.code).to.equal(3);
        expect(r.stderr).to.match(/^tickd ctl: unexpected reply from 127\.0\.0\.1:\d+ \(expected request c1\): "HTTP\/1\.1 400 Bad Request\\r"\n$/);
      } finally {
        for (const s of odd.sockets) s.destroy();
        odd.server.close();
      }
    });
  });

  describe('usage errors: exit 2, one line, nothing on stdout, nothing sent', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--bogus', 'stat'], /^unknown option --bogus$/],
      [['jobs', 'ls'], /^no command "jobs" \(tickd ctl help lists them\)$/],
      [['job'], /^"job" needs a command/],
      [['job', 'frob'], /^no command "job frob"/],
      [['job', 'get'], /^missing arguments: tickd ctl job get ID$/],
      [['job', 'get', 'a', 'b'], /^too many arguments: tickd ctl job get ID$/],
      [['job', 'set', 'a', 'next-week'], /^invalid WHEN "next-week": expected integer nanoseconds/],
      [['job', 'set', 'a b', 'now'], /^job identifier contains invalid character space/],
      [['job', 'ls', '--all'], /^--all does not apply to job ls$/],
      [['job', 'import', '--raw'], /^job import has no --raw output$/],
      [['stat', '--json', '--raw'], /^give --json or --raw, not both$/],
      [['stat', '--timeout', 'forever'], /^--timeout: "forever" is not a duration/],
      [['stat', '--addr', 'a b'], /^--addr: address "a b" is not HOST:PORT/],
      [['completion', 'fish'], /^completion for "fish" is not available \(bash or zsh\)$/],
      [[], /^no command given/],
    ];
    for (const [args, message] of cases) {
      it(args.join(' ') || '(no command, not a terminal)', async () => {
        const r = await ctl(['--addr', addrOf(daemon.tcp), ...args]);
        expect(r.code).to.equal(2);
        expect(r.stdout).to.equal('');
        const lines = r.stderr.trimEnd().split('\n');
        expect(lines, r.stderr).to.have.length(1);
        expect(lines[0]!.replace(/^tickd ctl: /, '')).to.match(message);
      });
    }
  });

  describe('help and completion', () => {
    it('help and --help print the commands on stdout, exit 0', async () => {
      for (const args of [['help'], ['--help'], ['-h']]) {
        const r = await ctl(args);
        expect(r.code).to.equal(0);
        expect(r.stdout).to.match(/^Usage: tickd ctl/);
        expect(r.stdout).to.include('job import [FILE]');
      }
      expect((await ctl(['job', 'set', '--help'])).stdout).to.match(/^Usage: tickd ctl job set ID WHEN\n/);
    });

    it('tickd --help names the ctl subcommand', async () => {
      const r = spawnSync(process.execPath, [TICKD, '--help'], { encoding: 'utf8' });
      expect(r.stdout).to.include('tickd ctl [OPTIONS] COMMAND [ARGUMENTS]');
    });

    for (const shell of ['bash', 'zsh']) {
      it(`completion ${shell} is a script the shell reads`, async function () {
        if (spawnSync(shell, ['-c', 'true']).status !== 0) this.skip();
        const r = await ctl(['completion', shell]);
        expect(r.code).to.equal(0);
        const check = spawnSync(shell, ['-n'], { input: r.stdout, encoding: 'utf8' });
        expect(check.status, check.stderr).to.equal(0);
      });
    }

    it('the bash completion completes commands, subcommands and options', async function () {
      if (spawnSync('bash', ['-c', 'true']).status !== 0) this.skip();
      const script = (await ctl(['completion', 'bash'])).stdout;
      const complete = (line: string): string[] => {
        const words = line.split(' ');
        const probe = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _tickd; printf '%s\\n' "\${COMPREPLY[@]}"`;
        const r = spawnSync('bash', ['-c', probe], { encoding: 'utf8', env: ctlEnv() });
        return r.stdout.split('\n').filter((l) => l !== '');
      };
      expect(complete('tickd c')).to.deep.equal(['ctl']);
      expect(complete('tickd ctl j')).to.deep.equal(['job']);
      expect(complete('tickd ctl --addr h:1 rule ')).to.deep.equal(['set', 'ls', 'rm']);
      expect(complete('tickd ctl job ls --js')).to.deep.equal(['--json']);
      expect(complete('tickd ctl completion ')).to.deep.equal(['bash', 'zsh']);
    });
  });

  it('a reader that goes away (| head -1) ends the output quietly', async function () {
    if (spawnSync('bash', ['-c', 'true']).status !== 0) this.skip();
    const lines = Array.from({ length: 30_000 }, (_, i) => `${i} SET pipe.${i} 1893466800000000000\n`).join('');
    client.write(lines);
    for (let i = 0; i < 30_000; i++) await client.readLine();
    const cmd = `set -o pipefail; "${process.execPath}" "${TICKD}" ctl --addr ${addrOf(daemon.tcp)} job ls pipe. | head -1`;
    const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8', env: ctlEnv() });
    expect(r.stdout).to.match(/^ID +STATUS {3}EXECUTION\n$/);
    expect(r.stderr).to.equal('');
    expect(r.status).to.equal(0);
  });
});
