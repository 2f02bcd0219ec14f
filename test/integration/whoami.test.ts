// GET /whoami through the real daemon: with a token file, each token is told its own name and
// namespace (never a secret), a missing or wrong token is 401 like on any data route, and HEAD
// answers the same without a body; without a token file the interface is open and says so.
// Every response matches the served OpenAPI document, which describes the configuration's answer.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { HttpApi, type RequestOptions } from './http-client.ts';

const TOKENS = `
[token.admin]
secret = "secret-admin"
namespace = "*"

[token.billing]
secret = "secret-billing"
namespace = "billing."
`;

describe('GET /whoami', function () {
  this.timeout(30_000);

  describe('with a token file', () => {
    let daemon: Daemon;
    let api: HttpApi;

    before(async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'tokens.toml'), TOKENS);
      daemon = await Daemon.start({ dir, workers: 2, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: join(dir, 'tokens.toml') } } });
      api = new HttpApi(daemon.http!);
      api.useDocument((await api.json('GET', '/openapi.json')).body);
    });
    after(async () => {
      api?.close();
      await daemon?.stop();
    });

    it('names the token of each request and its namespace, whatever worker answers', async () => {
      for (let i = 0; i < 4; i++) {
        expect((await api.json('GET', '/whoami', { token: 'secret-admin' })).body).to.deep.equal({ name: 'admin', namespace: '*', auth_enabled: true });
        const billing = await api.request('GET', '/whoami', { token: 'secret-billing' });
        expect(billing.status).to.equal(200);
        expect(billing.headers['content-type']).to.match(/^application\/json/);
        expect(JSON.parse(billing.text)).to.deep.equal({ name: 'billing', namespace: 'billing.', auth_enabled: true });
        expect(billing.text).not.to.contain('secret');
      }
    });

    it('is 401 with WWW-Authenticate without a token or with a wrong one', async () => {
      const cases: Array<[string, RequestOptions]> = [
        ['no header', { token: null }],
        ['an unknown secret', { token: 'secret-nobody' }],
        ['another scheme', { token: null, headers: { authorization: 'Basic secret-admin' } }],
      ];
      for (const [what, opts] of cases) {
        const r = await api.json('GET', '/whoami', opts);
        expect(r.status, what).to.equal(401);
        expect(r.body).to.deep.equal({ error: 'unauthorized' });
        expect(r.res.headers['www-authenticate']).to.equal('Bearer');
      }
    });

    it('HEAD answers the status and headers without a body', async () => {
      const head = await api.request('HEAD', '/whoami', { token: 'secret-billing' });
      expect(head.status).to.equal(200);
      expect(head.text).to.equal('');
      expect(Number(head.headers['content-length'])).to.equal(Buffer.byteLength('{"name":"billing","namespace":"billing.","auth_enabled":true}'));
      expect((await api.request('HEAD', '/whoami', { token: null })).status).to.equal(401);
      expect(api.checked).to.be.above(8);
    });
  });

  describe('without a token file', () => {
    let daemon: Daemon;
    let api: HttpApi;

    before(async () => {
      daemon = await Daemon.start({ config: { http: { listen: '127.0.0.1:0' } } });
      api = new HttpApi(daemon.http!);
      api.useDocument((await api.json('GET', '/openapi.json')).body);
    });
    after(async () => {
      api?.close();
      await daemon?.stop();
    });

    it('says auth is off: no name, every identifier, with or without a bearer header', async () => {
      for (const token of [null, 'anything']) {
        const r = await api.json('GET', '/whoami', { token });
        expect(r.status).to.equal(200);
        expect(r.body).to.deep.equal({ name: null, namespace: '*', auth_enabled: false });
      }
      const doc = (await api.json('GET', '/openapi.json')).body as { paths: Record<string, { get: { responses: Record<string, unknown> } }> };
      expect(Object.keys(doc.paths['/whoami']!.get.responses).sort()).to.deep.equal(['200', '500']);
      expect(api.checked).to.equal(3);
    });
  });
});
