// TCP authentication and namespaces on the real daemon (tickd-protocol(7) AUTHENTICATION and
// ERRORS; tickd.toml(5) TOKEN FILE): token-file startup errors, the AUTH flow, the 5-second
// deadline from accept, and the namespace matrix of tokens `a` (a.), `b` (b.) and `admin` (*).
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { stringify } from 'smol-toml';
import { buildConfig, Daemon, runTickd } from '../helpers/daemon.ts';
import { LineClient, stat } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/auth/${name}`, import.meta.url));
const TOKENS = fixture('tokens.toml');
const SECRET = { a: 'secret-a', b: 'secret-b', admin: 'secret-admin' } as const;
const FAR = '4102444800000000000'; // 2100-01-01
const DENIED = 'ERROR auth_denied insufficient namespace scope';

/** Runs tickd on a config whose controller.auth_file is `authFile`; returns exit code and stderr. */
async function startWith(authFile: string): Promise<{ code: number | null; stderr: string }> {
  const dir = tempDir();
  const configPath = join(dir, 'tickd.toml');
  writeFileSync(configPath, stringify(buildConfig(dir, { controller: { auth_file: authFile } })));
  return runTickd(['-c', configPath], { cwd: dir });
}

async function login(daemon: Daemon, secret: string): Promise<LineClient> {
  const c = await LineClient.connect(daemon.tcp);
  c.write(`AUTH ${secret}\n`);
  expect(await c.readLine()).to.equal('OK');
  return c;
}

/** The server closes after `expected`, with nothing else on the wire. */
async function expectClosedAfter(c: LineClient, expected: string): Promise<void> {
  expect(await c.readLine()).to.equal(expected);
  await c.waitClosed();
  expect(await c.readLine()).to.equal(null);
}

describe('TCP authentication', function () {
  this.timeout(30000);

  describe('token file errors stop startup with one line and exit 1', () => {
    const cases = [
      ['missing-secret.toml', /^tickd: auth_file: MissingSecret: token\.nosecret has no secret$/],
      ['missing-namespace.toml', /^tickd: auth_file: EmptyNamespace: token\.nonamespace\.namespace is missing or empty$/],
      ['empty-namespace.toml', /^tickd: auth_file: EmptyNamespace: token\.emptyns\.namespace is missing or empty$/],
      ['duplicate-secret.toml', /^tickd: auth_file: DuplicateSecret: token\.second and token\.first share a secret$/],
      ['not-toml.toml', /^tickd: auth_file: InvalidValue: \S*not-toml\.toml is not valid TOML: /],
      ['does-not-exist.toml', /^tickd: auth_file: ReadError: cannot read \S*does-not-exist\.toml: ENOENT$/],
    ] as const;
    // All the failing startups run at once; each case then checks its own outcome.
    let outcomes: Array<{ code: number | null; stderr: string }> = [];
    before(async () => { outcomes = await Promise.all(cases.map(([file]) => startWith(fixture(file)))); });
    for (const [i, [file, line]] of cases.entries()) {
      it(file, () => {
        const { code, stderr } = outcomes[i]!;
        expect(code).to.equal(1);
        const lines = stderr.trimEnd().split('\n');
        expect(lines, stderr).to.have.length(1);
        expect(lines[0]).to.match(line);
        expect(stderr).to.not.match(/secret-[a-z]|same-secret/); // secrets never printed
      });
    }
  });

  describe('with auth_file', () => {
    let daemon: Daemon;
    let open: Daemon;
    before(async () => {
      [daemon, open] = await Promise.all([
        Daemon.start({ workers: 2, config: { controller: { auth_file: TOKENS } } }),
        Daemon.start({ workers: 1 }),
      ]);
    });
    after(async () => { await Promise.all([daemon?.stop(), open?.stop()]); });

    it('AUTH <secret> -> OK, then commands run; STAT shows auth_enabled 1 and tls_enabled 0', async () => {
      const c = await login(daemon, SECRET.admin);
      expect(await c.request('1', `SET any.job ${FAR}`)).to.deep.equal(['1 OK']);
      expect(await c.request('2', 'GET any.job')).to.deep.equal([`2 OK planned ${FAR}`]);
      const s = await stat(c);
      expect(s.get('auth_enabled')).to.equal('1');
      expect(s.get('tls_enabled')).to.equal('0');
      c.close();
    });

    it('AUTH pipelined with commands in one write', async () => {
      const c = await LineClient.connect(daemon.tcp);
      c.write(`AUTH ${SECRET.a}\n1 SET a.pipe ${FAR}\n2 GET a.pipe\n`);
      expect(await c.readLine()).to.equal('OK');
      expect(await c.collect('1')).to.deep.equal(['1 OK']);
      expect(await c.collect('2')).to.deep.equal([`2 OK planned ${FAR}`]);
      c.close();
    });

    for (const [name, text, reply] of [
      ['a command before AUTH', '1 STAT\n', 'ERROR auth_required'],
      ['a write before AUTH', `1 SET a.early ${FAR}\n`, 'ERROR auth_required'],
      ['an unknown instruction before AUTH', '1 HELLO\n', 'ERROR auth_required'],
      ['AUTH after a request id', `1 AUTH ${SECRET.admin}\n`, 'ERROR auth_required'],
      ['AUTH without a secret', 'AUTH\n', 'ERROR auth_required'],
      ['an over-long line before AUTH', `AUTH ${'s'.repeat(5000)}\n`, 'ERROR auth_required'],
      ['an unknown secret', 'AUTH not-a-secret\n', 'ERROR auth_failed'],
      ['a secret with one character less', 'AUTH secret-adm\n', 'ERROR auth_failed'],
    ] as const) {
      it(`${name} -> "${reply}" (no request id, no message) and the connection is closed`, async () => {
        const c = await LineClient.connect(daemon.tcp);
        // The valid AUTH and command after it must not be read: the first failure closes.
        c.write(`${text}AUTH ${SECRET.admin}\n2 STAT\n`);
        await expectClosedAfter(c, reply);
      });
    }

    it('a refused write before AUTH changed nothing', async () => {
      const c = await LineClient.connect(daemon.tcp);
      c.write(`1 SET a.never ${FAR}\n`);
      await expectClosedAfter(c, 'ERROR auth_required');
      const admin = await login(daemon, SECRET.admin);
      expect(await admin.request('g', 'GET a.never')).to.deep.equal(['g ERROR not_found job "a.never" does not exist']);
      admin.close();
    });

    it('AUTH again after success is ignored: no reply, same namespace, connection open', async () => {
      const c = await login(daemon, SECRET.a);
      c.write(`AUTH ${SECRET.admin}\nAUTH wrong\nAUTH\n`);
      // The next line on the wire is the reply to this request: the AUTHs produced nothing.
      expect(await c.request('1', 'GET b.anything')).to.deep.equal([`1 ${DENIED}`]);
      expect(await c.request('2', 'STAT')).to.have.length(16);
      expect(c.closed).to.equal(false);
      c.close();
    });

    it('empty lines before AUTH are skipped and do not close', async () => {
      const c = await LineClient.connect(daemon.tcp);
      c.write(`\n\r\nAUTH ${SECRET.b}\n`);
      expect(await c.readLine()).to.equal('OK');
      c.close();
    });

    it('without auth_file no AUTH is needed; STAT shows auth_enabled 0', async () => {
      const c = await LineClient.connect(open.tcp);
      expect(await c.request('1', `SET z.open ${FAR}`)).to.deep.equal(['1 OK']);
      expect((await stat(c)).get('auth_enabled')).to.equal('0');
      c.close();
    });

    it('unauthenticated connections close 5 s after accept; authenticated ones and no-auth ones stay', async function () {
      this.timeout(20000);
      const elapsedToClose = async (send: string): Promise<number> => {
        const c = await LineClient.connect(daemon.tcp);
        const t0 = Date.now();
        if (send !== '') c.write(send);
        await c.waitClosed(9000);
        const ms = Date.now() - t0;
        expect(await c.readLine(), `sent ${JSON.stringify(send)}`).to.equal(null); // closed without a reply
        return ms;
      };
      const authed = await login(daemon, SECRET.a);
      const idleOpen = await LineClient.connect(open.tcp);
      // Silent, half an AUTH line, and a client that trickles bytes to look alive.
      const trickle = LineClient.connect(daemon.tcp).then(async (c) => {
        const t0 = Date.now();
        const timer = setInterval(() => { if (!c.closed) c.write('A'); }, 500);
        await c.waitClosed(9000).finally(() => clearInterval(timer));
        return Date.now() - t0;
      });
      const times = await Promise.all([elapsedToClose(''), elapsedToClose(`AUTH ${SECRET.a}`), trickle]);
      const names = ['silent', 'half an AUTH line', 'trickling bytes'];
      times.forEach((ms, i) => expect(ms, names[i]).to.be.within(4500, 6500));
      // Well past the deadline: the authenticated and the no-auth connection still answer.
      expect(await authed.request('1', 'GET a.pipe')).to.deep.equal([`1 OK planned ${FAR}`]);
      expect(await idleOpen.request('2', 'GET z.open')).to.deep.equal([`2 OK planned ${FAR}`]);
      authed.close();
      idleOpen.close();
    });
  });

  describe('namespaces', () => {
    let daemon: Daemon;
    const clients: Record<'a' | 'b' | 'admin', LineClient> = {} as Record<'a' | 'b' | 'admin', LineClient>;
    let n = 0;
    const rid = () => `r${++n}`;
    /** Sends one command and returns its reply lines with the request id stripped. */
    const ask = async (who: 'a' | 'b' | 'admin', command: string): Promise<string[]> => {
      const id = rid();
      const lines = await clients[who].request(id, command);
      for (const l of lines) expect(l.startsWith(`${id} `), l).to.equal(true);
      return lines.map((l) => l.slice(id.length + 1));
    };

    before(async () => {
      daemon = await Daemon.start({ workers: 2, config: { controller: { auth_file: TOKENS } } });
      for (const who of ['a', 'b', 'admin'] as const) clients[who] = await login(daemon, SECRET[who]);
      for (const ns of ['a', 'b', 'ab', 'x']) {
        expect(await ask('admin', `SET ${ns}.job ${FAR}`)).to.deep.equal(['OK']);
        expect(await ask('admin', `RULE SET ${ns}.rule ${ns}. shell true`)).to.deep.equal(['OK']);
      }
    });
    after(async () => {
      for (const c of Object.values(clients)) c.close();
      await daemon?.stop();
    });

    for (const [me, other] of [['a', 'b'], ['b', 'a']] as const) {
      it(`token ${me} is denied every command on ${other}'s identifiers, stays connected, and nothing changes`, async () => {
        const attempts = [
          `SET ${other}.job 4102444800000000001`,
          `SET ${other}.new ${FAR}`,
          `GET ${other}.job`,
          `GET ${other}.missing`, // denied, not not_found: existence outside the scope is not revealed
          `REMOVE ${other}.job`,
          `REMOVERULE ${other}.rule`,
          `RULE SET ${other}.rule ${other}. shell false`,
          `RULE SET ${other}.r2 ${me}. shell true`, // rule id outside
          `RULE SET ${me}.r ${other}. shell true`, // pattern outside
          `RULE SET ${me}.r "" shell true`, // catch-all pattern
          `RULE SET ${me}.r ${me} shell true`, // "a" is not inside "a."
          `SET x.job ${FAR}`,
          `GET ${me}`, // the namespace without its dot
        ];
        for (const cmd of attempts) expect(await ask(me, cmd), cmd).to.deep.equal([DENIED]);
        expect(clients[me].closed).to.equal(false);

        expect(await ask('admin', `GET ${other}.job`)).to.deep.equal([`OK planned ${FAR}`]);
        expect(await ask('admin', `GET ${other}.new`)).to.deep.equal([`ERROR not_found job "${other}.new" does not exist`]);
        const rules = await ask('admin', 'LISTRULES');
        expect(rules.filter((l) => l !== 'OK').sort()).to.deep.equal(
          ['a.rule a. shell true', 'ab.rule ab. shell true', 'b.rule b. shell true', 'x.rule x. shell true'],
        );
      });

      it(`token ${me}: QUERY and LISTRULES return only what lies inside ${me}.`, async () => {
        expect(await ask(me, 'QUERY')).to.deep.equal([`${me}.job planned ${FAR}`, 'OK']);
        expect(await ask(me, `QUERY ${me}`)).to.deep.equal([`${me}.job planned ${FAR}`, 'OK']); // not ab.job
        expect(await ask(me, `QUERY ${other}.`)).to.deep.equal(['OK']);
        expect(await ask(me, 'QUERY x')).to.deep.equal(['OK']);
        expect(await ask(me, 'LISTRULES')).to.deep.equal([`${me}.rule ${me}. shell true`, 'OK']);
      });
    }

    it('inside its namespace a token can do everything', async () => {
      expect(await ask('a', `SET a.own ${FAR}`)).to.deep.equal(['OK']);
      expect(await ask('a', 'GET a.own')).to.deep.equal([`OK planned ${FAR}`]);
      expect(await ask('a', 'RULE SET a.own.rule a.own. http POST http://127.0.0.1:9/x')).to.deep.equal(['OK']);
      expect(await ask('a', 'QUERY a.own')).to.deep.equal([`a.own planned ${FAR}`, 'OK']);
      expect((await ask('a', 'LISTRULES')).sort()).to.deep.equal(['OK', 'a.own.rule a.own. http POST http://127.0.0.1:9/x', 'a.rule a. shell true']);
      expect(await ask('a', 'REMOVERULE a.own.rule')).to.deep.equal(['OK']);
      expect(await ask('a', 'REMOVE a.own')).to.deep.equal(['OK']);
      expect(await ask('a', 'GET a.own')).to.deep.equal(['ERROR not_found job "a.own" does not exist']);
    });

    it('STAT is allowed for every token and counts everything', async () => {
      for (const who of ['a', 'b', 'admin'] as const) {
        const s = await stat(clients[who], rid());
        expect(s.get('jobs_total'), who).to.equal('4');
        expect(s.get('rules_total'), who).to.equal('4');
        expect(s.get('auth_enabled'), who).to.equal('1');
      }
    });

    it('* sees and reaches everything', async () => {
      expect((await ask('admin', 'QUERY')).sort()).to.deep.equal(
        ['OK', ...['a', 'ab', 'b', 'x'].map((ns) => `${ns}.job planned ${FAR}`)],
      );
      expect((await ask('admin', 'LISTRULES')).sort()).to.deep.equal(
        ['OK', ...['a', 'ab', 'b', 'x'].map((ns) => `${ns}.rule ${ns}. shell true`)],
      );
      expect(await ask('admin', 'RULE SET catchall "" shell true')).to.deep.equal(['OK']);
      expect(await ask('admin', 'REMOVERULE catchall')).to.deep.equal(['OK']);
      expect(await ask('admin', `SET x.tmp ${FAR}`)).to.deep.equal(['OK']);
      expect(await ask('admin', 'REMOVE x.tmp')).to.deep.equal(['OK']);
    });
  });
});
