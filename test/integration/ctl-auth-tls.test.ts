// `tickd ctl` with TLS (the test CA of test/fixtures/tls) and token authentication with
// namespaces (test/fixtures/auth/tokens.toml: a -> "a.", b -> "b.", admin -> "*")
// (tickd-ctl(1) OPTIONS, ENVIRONMENT, EXIT STATUS): what each failure exits with and says, and
// the token never appearing in the process's argument vector, in ctl's messages or in the
// daemon's log.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Daemon } from '../helpers/daemon.ts';
import { addrOf, BackgroundCtl, ctl } from '../helpers/ctl.ts';
import { childPids, cmdline } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';

const tls = (name: string) => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));
const TOKENS = fileURLToPath(new URL('../fixtures/auth/tokens.toml', import.meta.url));
const SECRET = { a: 'secret-a', b: 'secret-b', admin: 'secret-admin' } as const;

describe('tickd ctl with TLS and AUTH', function () {
  this.timeout(60_000);
  let tlsAuth: Daemon; // TLS + tokens, debug logging
  let plainAuth: Daemon; // tokens, no TLS
  let plainOpen: Daemon; // neither
  let dir: string;

  before(async () => {
    [tlsAuth, plainAuth, plainOpen] = await Promise.all([
      Daemon.start({ config: { log: { level: 'debug' }, controller: { tls_cert: tls('server.crt'), tls_key: tls('server.key'), auth_file: TOKENS } } }),
      Daemon.start({ config: { log: { level: 'debug' }, controller: { auth_file: TOKENS } } }),
      Daemon.start(),
    ]);
    dir = tempDir();
    writeFileSync(join(dir, 'admin.token'), `${SECRET.admin}\n`);
    writeFileSync(join(dir, 'a.token'), SECRET.a);
  });
  after(async () => { await Promise.all([tlsAuth, plainAuth, plainOpen].map((d) => d?.stop())); });

  describe('TLS', () => {
    let T: string[];
    before(() => { T = ['--addr', addrOf(tlsAuth.tcp), '--token-file', join(dir, 'admin.token')]; });

    it('--tls --cacert: the whole conversation inside TLS', async () => {
      expect((await ctl([...T, '--tls', '--cacert', tls('ca.crt'), 'job', 'set', 'a.tls', '1893466800000000000', '--raw'])).stdout).to.equal('OK\n');
      const stat = JSON.parse((await ctl([...T, '--cacert', tls('ca.crt'), 'stat', '--json'])).stdout) as Record<string, unknown>;
      expect(stat).to.include({ tls_enabled: 1, auth_enabled: 1 });
    });

    it('the environment equivalents: TICKD_TLS, TICKD_CACERT, TICKD_SERVERNAME', async () => {
      const r = await ctl(['--addr', addrOf(tlsAuth.tcp), 'ping', '--raw'], { env: { TICKD_TLS: '1', TICKD_CACERT: tls('ca.crt'), TICKD_SERVERNAME: 'localhost', TICKD_TOKEN: SECRET.admin } });
      expect(r, r.stderr).to.deep.include({ code: 0, stdout: 'OK\n' });
    });

    it('a certificate from an unknown CA: exit 3, one line that says what to do', async () => {
      const r = await ctl([...T, '--tls', 'ping']);
      expect(r).to.deep.include({ code: 3, stdout: '' });
      expect(r.stderr).to.match(/^tickd ctl: cannot connect to 127\.0\.0\.1:\d+: TLS: (self-signed certificate in certificate chain|unable to verify the first certificate) \(give the CA with --cacert\)\n$/);
    });

    it('--insecure accepts it', async () => {
      expect((await ctl([...T, '--insecure', 'ping', '--raw'])).stdout).to.equal('OK\n');
    });

    it('--servername: the name the certificate must carry', async () => {
      expect((await ctl([...T, '--cacert', tls('ca.crt'), '--servername', 'localhost', 'ping', '--raw'])).stdout).to.equal('OK\n');
      const r = await ctl([...T, '--cacert', tls('ca.crt'), '--servername', 'tickd.example', 'ping']);
      expect(r.code).to.equal(3);
      expect(r.stderr).to.match(/^tickd ctl: cannot connect to .*TLS: Hostname\/IP does not match certificate's altnames: Host: tickd\.example/);
      expect(r.stderr.trimEnd().split('\n')).to.have.length(1);
    });

    it('plaintext to a TLS listener: exit 3, with the hint', async () => {
      const r = await ctl([...T, 'ping']);
      expect(r.code).to.equal(3);
      expect(r.stderr).to.match(/^tickd ctl: connection to 127\.0\.0\.1:\d+ closed before the answer.*\(a TLS listener\? try --tls\)\n$/);
    });

    it('TLS to a plaintext listener: exit 3 within --timeout', async () => {
      const r = await ctl(['--addr', addrOf(plainOpen.tcp), '--tls', '--insecure', '--timeout', '1s', 'ping']);
      expect(r.code).to.equal(3);
      expect(r.stderr).to.match(/^tickd ctl: cannot connect to 127\.0\.0\.1:\d+: no connection within 1 s\n$/);
    });
  });

  describe('AUTH and namespaces', () => {
    let P: string[];
    before(() => { P = ['--addr', addrOf(plainAuth.tcp)]; });

    it('a token sees and touches its namespace only; auth_denied exits 1 and prints the code', async () => {
      const a = ['--token-file', join(dir, 'a.token')];
      expect((await ctl([...P, ...a, 'job', 'set', 'a.one', '1893466800000000000'])).code).to.equal(0);
      expect((await ctl([...P, '--token', SECRET.b, 'job', 'set', 'b.one', '1893466800000000000'])).code).to.equal(0);
      const denied = await ctl([...P, ...a, 'job', 'set', 'b.two', 'now']);
      expect(denied).to.deep.equal({ code: 1, stdout: '', stderr: 'tickd ctl: auth_denied: insufficient namespace scope\n' });
      expect((await ctl([...P, ...a, 'job', 'get', 'b.one'])).stderr).to.equal('tickd ctl: auth_denied: insufficient namespace scope\n');
      expect((await ctl([...P, ...a, 'job', 'ls', '--raw'])).stdout).to.equal('a.one planned 1893466800000000000\nOK\n');
      const rule = await ctl([...P, ...a, 'rule', 'set', 'a.r', 'b.', 'shell', 'true']);
      expect(rule).to.deep.include({ code: 1, stderr: 'tickd ctl: auth_denied: insufficient namespace scope\n' });
      const rm = await ctl([...P, ...a, 'job', 'rm', 'a.one', 'b.one']);
      expect(rm).to.deep.equal({ code: 1, stdout: '', stderr: 'tickd ctl: b.one: auth_denied: insufficient namespace scope\n' });
      expect(JSON.parse((await ctl([...P, ...a, 'stat', '--json'])).stdout)).to.include({ auth_enabled: 1 });
    });

    it('an unknown token: exit 3, auth_failed, and the secret is not repeated', async () => {
      const r = await ctl([...P, '--token', 'hunter2-not-a-token', 'job', 'ls']);
      expect(r).to.deep.equal({ code: 3, stdout: '', stderr: `tickd ctl: authentication failed: ${addrOf(plainAuth.tcp)} does not accept this token (auth_failed)\n` });
    });

    it('no token for a daemon that wants one: exit 3, auth_required, with what to do', async () => {
      const r = await ctl([...P, 'job', 'ls']);
      expect(r).to.deep.equal({ code: 3, stdout: '', stderr: `tickd ctl: ${addrOf(plainAuth.tcp)} requires authentication: give a token with --token-file or TICKD_TOKEN (auth_required)\n` });
    });

    it('TICKD_TOKEN and TICKD_TOKEN_FILE', async () => {
      expect((await ctl([...P, 'ping', '--raw'], { env: { TICKD_TOKEN: SECRET.a } })).stdout).to.equal('OK\n');
      expect((await ctl([...P, 'ping', '--raw'], { env: { TICKD_TOKEN_FILE: join(dir, 'admin.token') } })).stdout).to.equal('OK\n');
      const missing = await ctl([...P, 'ping'], { env: { TICKD_TOKEN_FILE: join(dir, 'nope') } });
      expect(missing).to.deep.equal({ code: 2, stdout: '', stderr: `tickd ctl: cannot read the token file ${join(dir, 'nope')} (TICKD_TOKEN_FILE): ENOENT\n` });
    });

    it('a token given by environment or file is in no argument vector, no message and no daemon log line', async () => {
      const secret = SECRET.admin;
      const watchers = [
        new BackgroundCtl([...P, 'watch', 'a.', '--interval', '100ms'], { env: { TICKD_TOKEN: secret } }),
        new BackgroundCtl([...P, '--token-file', join(dir, 'admin.token'), 'watch', '--interval', '100ms']),
      ];
      try {
        for (const w of watchers) {
          await w.waitForLine((l) => l.startsWith('{"type":"stat"'), 15_000, 'first poll');
          const pids = [w.proc.pid!, ...childPids(w.proc.pid!)];
          for (const pid of pids) expect(cmdline(pid).join(' '), `pid ${pid}`).to.not.include(secret);
          expect(cmdline(w.proc.pid!).join(' ')).to.include('watch');
        }
        const bad = await ctl([...P, 'ping'], { env: { TICKD_TOKEN: 'wrong-secret-xyz' } });
        expect(bad.code).to.equal(3);
        expect(bad.stderr).to.not.include('wrong-secret-xyz');
      } finally {
        for (const w of watchers) w.kill('SIGINT');
      }
      for (const w of watchers) {
        expect(await w.exited).to.equal(0);
        expect(w.stderr).to.not.include(secret);
      }
      // The daemon logs at debug; every line of it, AUTH included, is free of the secrets.
      expect(plainAuth.stderr.length).to.be.greaterThan(3);
      const log = plainAuth.stderr.join('\n');
      for (const s of [secret, 'wrong-secret-xyz']) expect(log).to.not.include(s);
    });
  });
});
