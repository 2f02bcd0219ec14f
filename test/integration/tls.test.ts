// TLS on the TCP interface, on the real daemon (tickd.toml(5) [controller];
// tickd-protocol(7) TLS and AUTHENTICATION): the full protocol inside TLS, plaintext clients
// refused without harming others, the 5-second deadline covering the handshake, certificate
// chains, TLS 1.2 as the minimum, and the startup errors of bad TLS material. Fixtures:
// test/fixtures/tls/README.md.
import { expect } from 'chai';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { stringify } from 'smol-toml';
import { buildConfig, Daemon, runTickd, type Address } from '../helpers/daemon.ts';
import { LineClient, stat, waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';

const tlsFile = (name: string) => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));
const TOKENS = fileURLToPath(new URL('../fixtures/auth/tokens.toml', import.meta.url));
const CA = readFileSync(tlsFile('ca.crt'));
const TRUST: ConnectionOptions = { ca: CA };
const FAR = '4102444800000000000';

async function tlsLogin(addr: Address, secret: string): Promise<LineClient> {
  const c = await LineClient.connectTls(addr, TRUST);
  c.write(`AUTH ${secret}\n`);
  expect(await c.readLine()).to.equal('OK');
  return c;
}

/** The error a TLS client gets from this server (null when the handshake succeeds). */
async function tlsFailure(addr: Address, opts: ConnectionOptions): Promise<NodeJS.ErrnoException | null> {
  try {
    (await LineClient.connectTls(addr, opts)).close();
    return null;
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

function rawConnect(addr: Address): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = netConnect({ host: addr.host, port: addr.port }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Milliseconds from now until the server closes `s` (Infinity if it is still open after 9 s). */
function msUntilClosed(s: Socket): Promise<number> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const cap = setTimeout(() => { resolve(Infinity); s.destroy(); }, 9000);
    s.on('error', () => {});
    s.on('data', () => {});
    s.once('close', () => { clearTimeout(cap); resolve(Date.now() - t0); });
  });
}

/** The first 40 bytes of a ClientHello whose record header announces 512: the server waits for the rest. */
const HALF_CLIENT_HELLO = Buffer.concat([
  Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]),
  Buffer.alloc(29, 0x2a),
]);

async function startupError(controller: Record<string, unknown>): Promise<{ code: number | null; stderr: string }> {
  const dir = tempDir();
  const configPath = join(dir, 'tickd.toml');
  writeFileSync(configPath, stringify(buildConfig(dir, { controller })));
  return runTickd(['-c', configPath], { cwd: dir });
}

describe('TLS', function () {
  this.timeout(30000);
  let tlsAuth: Daemon; // server.crt, tokens
  let tlsOpen: Daemon; // server.crt given by relative paths, no auth
  let chain: Daemon; // chain.crt (leaf + intermediate + root)
  let leafOnly: Daemon; // chain-leaf.crt alone: the control for the chain test

  before(async () => {
    const openDir = tempDir();
    for (const f of ['server.crt', 'server.key']) copyFileSync(tlsFile(f), join(openDir, f));
    [tlsAuth, tlsOpen, chain, leafOnly] = await Promise.all([
      Daemon.start({ workers: 2, config: { controller: { tls_cert: tlsFile('server.crt'), tls_key: tlsFile('server.key'), auth_file: TOKENS } } }),
      // Relative TLS paths are relative to the working directory (tickd.toml(5) DESCRIPTION);
      // Daemon runs in its dir.
      Daemon.start({ dir: openDir, config: { controller: { tls_cert: 'server.crt', tls_key: 'server.key' } } }),
      Daemon.start({ config: { controller: { tls_cert: tlsFile('chain.crt'), tls_key: tlsFile('chain-leaf.key') } } }),
      Daemon.start({ config: { controller: { tls_cert: tlsFile('chain-leaf.crt'), tls_key: tlsFile('chain-leaf.key') } } }),
    ]);
  });
  after(async () => { await Promise.all([tlsAuth, tlsOpen, chain, leafOnly].map((d) => d?.stop())); });

  it('the "ready" line reports tls and auth', async () => {
    expect(await tlsAuth.waitForLog((r) => r['msg'] === 'ready')).to.include({ tls: true, auth: true });
    expect(await tlsOpen.waitForLog((r) => r['msg'] === 'ready')).to.include({ tls: true, auth: false });
  });

  it('runs the full protocol inside TLS, with AUTH; STAT shows tls_enabled 1 and auth_enabled 1', async () => {
    const c = await tlsLogin(tlsAuth.tcp, 'secret-a');
    expect(await c.request('1', `SET a.t1 ${FAR}`)).to.deep.equal(['1 OK']);
    expect(await c.request('2', 'GET a.t1')).to.deep.equal([`2 OK planned ${FAR}`]);
    expect(await c.request('3', 'RULE SET a.r a. shell "echo hi > /dev/null"')).to.deep.equal(['3 OK']);
    expect(await c.request('4', 'LISTRULES')).to.deep.equal(['4 a.r a. shell "echo hi > /dev/null"', '4 OK']);
    expect(await c.request('5', 'QUERY a.')).to.deep.equal([`5 a.t1 planned ${FAR}`, '5 OK']);
    expect(await c.request('6', 'GET b.t1')).to.deep.equal(['6 ERROR auth_denied insufficient namespace scope']);
    expect(await c.request('7', 'REMOVERULE a.r')).to.deep.equal(['7 OK']);
    expect(await c.request('8', 'REMOVE a.t1')).to.deep.equal(['8 OK']);
    const s = await stat(c);
    expect(s.get('tls_enabled')).to.equal('1');
    expect(s.get('auth_enabled')).to.equal('1');
    c.close();
  });

  it('AUTH failures inside TLS: the error line, then the connection is closed', async () => {
    const c = await LineClient.connectTls(tlsAuth.tcp, TRUST);
    c.write('AUTH wrong\n1 STAT\n');
    expect(await c.readLine()).to.equal('ERROR auth_failed');
    await c.waitClosed();
    const d = await LineClient.connectTls(tlsAuth.tcp, TRUST);
    d.write('1 STAT\n');
    expect(await d.readLine()).to.equal('ERROR auth_required');
    await d.waitClosed();
  });

  it('without auth_file: commands at once, STAT tls_enabled 1 auth_enabled 0; the name localhost verifies too', async () => {
    const c = await LineClient.connectTls(tlsOpen.tcp, { ...TRUST, servername: 'localhost' });
    expect(await c.request('1', `SET any.t ${FAR}`)).to.deep.equal(['1 OK']);
    const s = await stat(c);
    expect(s.get('tls_enabled')).to.equal('1');
    expect(s.get('auth_enabled')).to.equal('0');
    c.close();
  });

  it('a plaintext client on the TLS port is closed, with no protocol reply, while TLS clients keep working', async () => {
    const before = await tlsLogin(tlsAuth.tcp, 'secret-b');
    const plain = await LineClient.connect(tlsAuth.tcp);
    plain.write('AUTH secret-b\n1 STAT\n');
    expect(await before.request('1', `SET b.during ${FAR}`)).to.deep.equal(['1 OK']);
    await plain.waitClosed();
    const got: string[] = [];
    for (let l = await plain.readLine(); l !== null; l = await plain.readLine()) got.push(l);
    expect(got.filter((l) => /^OK|^1 |ERROR/.test(l))).to.deep.equal([]);
    // The same connection keeps working, and the server still accepts new TLS clients.
    expect(await before.request('2', 'GET b.during')).to.deep.equal([`2 OK planned ${FAR}`]);
    const after = await tlsLogin(tlsAuth.tcp, 'secret-b');
    expect(await after.request('3', 'REMOVE b.during')).to.deep.equal(['3 OK']);
    before.close();
    after.close();
  });

  it('the 5 s deadline runs from accept and covers the handshake; authenticated (or no-auth) sessions stay', async function () {
    this.timeout(20000);
    const authed = await tlsLogin(tlsAuth.tcp, 'secret-a');
    const openIdle = await LineClient.connectTls(tlsOpen.tcp, TRUST);
    const silent = await rawConnect(tlsAuth.tcp);
    const half = await rawConnect(tlsAuth.tcp);
    const halfNoAuth = await rawConnect(tlsOpen.tcp); // a stalled handshake is closed even without auth_file
    const handshakenIdle = await LineClient.connectTls(tlsAuth.tcp, TRUST);
    const waits = [msUntilClosed(silent), msUntilClosed(half), msUntilClosed(halfNoAuth)];
    half.write(HALF_CLIENT_HELLO);
    halfNoAuth.write(HALF_CLIENT_HELLO);
    const t0 = Date.now();
    handshakenIdle.write('AUTH secret-a'); // no newline: not an AUTH yet
    const idle = handshakenIdle.waitClosed(9000).then(() => Date.now() - t0, () => Infinity);
    const times = await Promise.all([...waits, idle]);
    const names = ['silent raw socket', 'half a ClientHello', 'half a ClientHello, no auth_file', 'TLS done, no AUTH line'];
    times.forEach((ms, i) => expect(ms, names[i]).to.be.within(4500, 6500));
    expect(await handshakenIdle.readLine()).to.equal(null);
    // Past the deadline: the authenticated TLS session and the no-auth TLS session still answer,
    // and every closed connection has left the connection count.
    expect(await authed.request('1', 'STAT')).to.have.length(16);
    expect(await openIdle.request('2', `SET z.late ${FAR}`)).to.deep.equal(['2 OK']);
    await waitFor(async () => (await stat(authed)).get('connections') === '1', 5000, 'connections back to 1');
    expect((await stat(openIdle)).get('connections')).to.equal('1');
    authed.close();
    openIdle.close();
  });

  it('a certificate chain file is served whole (a client trusting only the root verifies the leaf)', async () => {
    const c = await LineClient.connectTls(chain.tcp, TRUST);
    expect((await stat(c)).get('tls_enabled')).to.equal('1');
    c.close();
    // Control: the same leaf without its intermediate does not verify with the same client...
    const err = await tlsFailure(leafOnly.tcp, TRUST);
    expect(err?.code).to.equal('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    // ...but does when the client is given the intermediate itself.
    expect(await tlsFailure(leafOnly.tcp, { ca: [CA, readFileSync(tlsFile('intermediate.crt'))] })).to.equal(null);
  });

  it('TLS 1.2 is the minimum: a TLS 1.1-only client is refused by the server; 1.2 and 1.3 work', async () => {
    // SECLEVEL=0 lets this client really offer TLS 1.1, so the refusal comes from the server.
    const err = await tlsFailure(tlsOpen.tcp, { ...TRUST, minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' });
    expect(err?.code).to.equal('ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
      const c = await LineClient.connectTls(tlsOpen.tcp, { ...TRUST, minVersion: version, maxVersion: version });
      expect((c.socket as TLSSocket).getProtocol()).to.equal(version);
      expect(await c.request('v', 'GET z.none')).to.deep.equal(['v ERROR not_found job "z.none" does not exist']);
      c.close();
    }
  });

  describe('bad TLS material stops startup with one line naming the file(s), exit 1', () => {
    const cases: Array<[string, () => Record<string, unknown>, RegExp]> = [
      ['a key that does not match the certificate',
        () => ({ tls_cert: tlsFile('server.crt'), tls_key: tlsFile('mismatched.key') }),
        /^tickd: tls: InvalidValue: controller\.tls_cert \S+\/server\.crt and controller\.tls_key \S+\/mismatched\.key do not form a usable pair: /],
      ['the CA certificate with the server key',
        () => ({ tls_cert: tlsFile('ca.crt'), tls_key: tlsFile('server.key') }),
        /^tickd: tls: InvalidValue: controller\.tls_cert \S+\/ca\.crt and controller\.tls_key \S+\/server\.key do not form a usable pair: /],
      ['an unreadable certificate path',
        () => ({ tls_cert: tlsFile('no-such.crt'), tls_key: tlsFile('server.key') }),
        /^tickd: tls: InvalidValue: cannot read controller\.tls_cert \S+\/no-such\.crt: ENOENT$/],
      ['an unreadable key path (a directory)',
        () => ({ tls_cert: tlsFile('server.crt'), tls_key: tempDir() }),
        /^tickd: tls: InvalidValue: cannot read controller\.tls_key \S+: EISDIR$/],
      ['an empty certificate file', () => {
        const empty = join(tempDir(), 'empty.crt');
        writeFileSync(empty, '');
        return { tls_cert: empty, tls_key: tlsFile('server.key') };
      }, /^tickd: tls: InvalidValue: controller\.tls_cert \S+\/empty\.crt holds no PEM certificate: /],
      ['an empty key file', () => {
        const empty = join(tempDir(), 'empty.key');
        writeFileSync(empty, '');
        return { tls_cert: tlsFile('server.crt'), tls_key: empty };
      }, /^tickd: tls: InvalidValue: controller\.tls_key \S+\/empty\.key holds no usable PEM private key: /],
      ['a certificate given as the key',
        () => ({ tls_cert: tlsFile('server.crt'), tls_key: tlsFile('server.crt') }),
        /^tickd: tls: InvalidValue: controller\.tls_key \S+\/server\.crt holds no usable PEM private key: /],
      ['only tls_cert', () => ({ tls_cert: tlsFile('server.crt') }), /^tickd: config: InvalidValue: .*tls_key/],
      ['only tls_key', () => ({ tls_key: tlsFile('server.key') }), /^tickd: config: InvalidValue: .*tls_cert/],
    ];
    // All the failing startups run at once; each case then checks its own outcome.
    let outcomes: Array<{ code: number | null; stderr: string }> = [];
    before(async () => { outcomes = await Promise.all(cases.map(([, controller]) => startupError(controller()))); });
    for (const [i, [name, , line]] of cases.entries()) {
      it(name, () => {
        const { code, stderr } = outcomes[i]!;
        expect(code).to.equal(1);
        const lines = stderr.trimEnd().split('\n');
        expect(lines, stderr).to.have.length(1);
        expect(lines[0]).to.match(line);
      });
    }
  });
});
