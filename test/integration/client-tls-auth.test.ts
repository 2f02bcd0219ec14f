// The client over TLS (the test CA of test/fixtures/tls) with token authentication and
// namespaces (test/fixtures/auth/tokens.toml: a -> "a.", admin -> "*"): AUTH on every
// connection, auth_denied as a ReplyError, a refused token ending the client with AuthError,
// and an untrusted certificate refused.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AuthError, connect, ReplyError } from '../../lib/client/index.ts';
import { Daemon } from '../helpers/daemon.ts';

const tls = (name: string) => fileURLToPath(new URL(`../fixtures/tls/${name}`, import.meta.url));
const TOKENS = fileURLToPath(new URL('../fixtures/auth/tokens.toml', import.meta.url));
const FAR = 1893466800000000000n;

describe('client: TLS and AUTH', function () {
  this.timeout(30_000);
  let daemon: Daemon;
  let addr: string;
  let ca: Buffer;

  before(async () => {
    daemon = await Daemon.start({ config: { controller: { tls_cert: tls('server.crt'), tls_key: tls('server.key'), auth_file: TOKENS } } });
    addr = `${daemon.tcp.host}:${daemon.tcp.port}`;
    ca = readFileSync(tls('ca.crt'));
  });
  after(async () => { await daemon?.stop(); });

  it('TLS with the CA and a token: the namespace applies; auth_denied outside it', async () => {
    const a = await connect({ addresses: addr, tls: { ca, servername: 'localhost' }, token: 'secret-a' });
    try {
      await a.set('a.tls', FAR);
      expect((await a.get('a.tls'))?.execution).to.equal(FAR);
      const denied = await a.set('b.tls', FAR).catch((e: unknown) => e);
      expect(denied).to.be.instanceOf(ReplyError);
      expect(denied).to.include({ code: 'auth_denied' });
      const stat = await a.stat();
      expect(stat).to.include({ tls_enabled: '1', auth_enabled: '1' });
    } finally {
      await a.close();
    }
    const admin = await connect({ addresses: addr, tls: { ca }, token: 'secret-admin' });
    expect((await admin.listJobs().toArray()).map((j) => j.id)).to.include('a.tls');
    await admin.close();
  });

  it('a wrong token: connect rejects with AuthError auth_failed; none: auth_required', async () => {
    const bad = await connect({ addresses: addr, tls: { ca }, token: 'nope' }).catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(AuthError);
    expect(bad).to.include({ code: 'auth_failed' });
    expect((bad as Error).message).to.not.include('nope');
    const c = await connect({ addresses: addr, tls: { ca } });
    c.on('error', () => {});
    const none = await c.get('a.x').catch((e: unknown) => e);
    expect(none).to.be.instanceOf(AuthError);
    expect(none).to.include({ code: 'auth_required' });
    expect(c.status).to.equal('end');
  });

  it('an untrusted certificate, or plaintext to the TLS listener: connection errors', async () => {
    const untrusted = await connect({ addresses: addr, tls: true, token: 'secret-admin' }).catch((e: unknown) => e);
    expect(untrusted).to.include({ code: 'connection' });
    expect((untrusted as Error).message).to.match(/TLS: (self-signed certificate in certificate chain|unable to verify the first certificate)/);
    const plain = await connect({ addresses: addr, token: 'secret-admin', connectTimeout: 2000 }).catch((e: unknown) => e);
    expect(plain).to.include({ code: 'connection' });
  });
});
