// HTTP authentication and namespaces on the real daemon with an auth_file
// (tickd-protocol(7) AUTHENTICATION, HTTP INTERFACE): 401 + WWW-Authenticate for a missing or
// unknown bearer token, 403 outside the namespace, lists narrowed to it, `*` sees everything,
// /health and /openapi.json open, and the same tokens and store as TCP. Every response is
// checked against the served OpenAPI document.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { HttpApi } from './http-client.ts';

const TOKENS = `
[token.a]
secret = "secret-a"
namespace = "a."

[token.b]
secret = "secret-b"
namespace = "b."

[token.admin]
secret = "secret-admin"
namespace = "*"
`;

const FAR = { execution: '2099-01-01T00:00:00Z' };
const shell = (pattern: string) => ({ pattern, runner: { type: 'shell', command: 'true' } });
const ids = (text: string): string[] => (JSON.parse(text) as Array<{ id: string }>).map((x) => x.id).sort();

describe('HTTP authentication and namespaces', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let anon: HttpApi;
  let a: HttpApi;
  let b: HttpApi;
  let admin: HttpApi;

  before(async () => {
    const dir = tempDir();
    const authFile = join(dir, 'tokens.toml');
    writeFileSync(authFile, TOKENS);
    daemon = await Daemon.start({ dir, workers: 2, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: authFile } } });
    anon = new HttpApi(daemon.http!);
    a = new HttpApi(daemon.http!, 'secret-a');
    b = new HttpApi(daemon.http!, 'secret-b');
    admin = new HttpApi(daemon.http!, 'secret-admin');
    const doc = await anon.request('GET', '/openapi.json');
    for (const api of [anon, a, b, admin]) api.useDocument(JSON.parse(doc.text));
  });
  after(async () => {
    for (const api of [anon, a, b, admin]) api?.close();
    await daemon?.stop();
  });

  it('/health and /openapi.json need no token; the document declares bearer security', async () => {
    expect((await anon.request('GET', '/health')).status).to.equal(200);
    const res = await anon.request('GET', '/openapi.json');
    expect(res.status).to.equal(200);
    const doc = JSON.parse(res.text) as { security: unknown; components: { securitySchemes: unknown } };
    expect(doc.security).to.deep.equal([{ bearer: [] }]);
    expect(doc.components.securitySchemes).to.deep.equal({ bearer: { type: 'http', scheme: 'bearer', description: 'A secret from the token file.' } });
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  it('every other route: missing, unknown or malformed credentials -> 401 {"error":"unauthorized"} + WWW-Authenticate: Bearer', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/jobs'], ['GET', '/jobs/a.x'], ['PUT', '/jobs/a.x', FAR], ['DELETE', '/jobs/a.x'],
      ['GET', '/rules'], ['GET', '/rules/a.x'], ['PUT', '/rules/a.x', shell('a.')], ['DELETE', '/rules/a.x'],
      ['GET', '/stats'], ['HEAD', '/jobs/a.x'],
    ];
    const credentials: Array<Record<string, string> | null> = [
      null, { authorization: 'Bearer nope' }, { authorization: 'Bearer' }, { authorization: 'Basic c2VjcmV0LWE6' },
      { authorization: 'secret-a' }, { authorization: 'Bearer secret-a-and-more' },
    ];
    for (const [method, path, body] of routes) {
      for (const headers of credentials) {
        const res = await anon.request(method, path, { body, headers: headers ?? {} });
        const what = `${method} ${path} ${JSON.stringify(headers)}`;
        expect(res.status, what).to.equal(401);
        expect(res.headers['www-authenticate'], what).to.equal('Bearer');
        if (method !== 'HEAD') expect(res.text, what).to.equal('{"error":"unauthorized"}');
      }
    }
    // The same requests with a valid token get past authentication (the job does not exist).
    expect((await a.request('GET', '/jobs/a.x')).status).to.equal(404);
    expect((await anon.request('GET', '/jobs/a.x', { headers: { authorization: 'bearer secret-a' } })).status, 'scheme is case-insensitive').to.equal(404);
  });

  it('a token reaches its own namespace; each is denied the other\'s ids with 403', async () => {
    for (const [api, own, other] of [[a, 'a', 'b'], [b, 'b', 'a']] as const) {
      expect((await api.request('PUT', `/jobs/${own}.job`, { body: FAR })).status).to.equal(200);
      expect((await api.request('GET', `/jobs/${own}.job`)).status).to.equal(200);
      expect((await api.request('PUT', `/rules/${own}.rule`, { body: shell(`${own}.`) })).status).to.equal(200);
      const denied: Array<[string, string, unknown?]> = [
        ['PUT', `/jobs/${other}.job`, FAR], ['GET', `/jobs/${other}.job`], ['DELETE', `/jobs/${other}.job`],
        ['GET', `/jobs/${other}.missing`],
        ['PUT', `/rules/${other}.rule`, shell(`${other}.`)], ['GET', `/rules/${other}.rule`], ['DELETE', `/rules/${other}.rule`],
        // RULE SET checks the pattern too: a rule in one's namespace matching the other's jobs.
        ['PUT', `/rules/${own}.sneaky`, shell(`${other}.`)], ['PUT', `/rules/${own}.all`, shell('')],
      ];
      for (const [method, path, body] of denied) {
        const res = await api.request(method, path, { body });
        expect([res.status, res.text], `${own}: ${method} ${path}`).to.deep.equal([403, '{"error":"insufficient namespace scope"}']);
      }
    }
    // Nothing denied was changed.
    expect((await admin.request('GET', '/jobs/a.job')).status).to.equal(200);
    expect((await admin.request('GET', '/rules/b.rule')).status).to.equal(200);
    expect((await admin.request('GET', '/rules/a.sneaky')).status).to.equal(404);
  });

  it('lists are narrowed to the namespace; `*` sees everything', async () => {
    for (const id of ['a.l1', 'a.l2', 'b.l1']) await admin.request('PUT', `/jobs/${id}`, { body: FAR });
    await admin.request('PUT', '/rules/b.lr', { body: shell('b.') });
    const aJobs = ids((await a.request('GET', '/jobs')).text);
    expect(aJobs).to.include.members(['a.l1', 'a.l2']);
    expect(aJobs.every((id) => id.startsWith('a.'))).to.equal(true);
    expect(ids((await b.request('GET', '/jobs')).text).every((id) => id.startsWith('b.'))).to.equal(true);
    expect(ids((await admin.request('GET', '/jobs')).text)).to.include.members(['a.l1', 'a.l2', 'b.l1']);
    expect((await a.request('GET', '/jobs?prefix=b.')).text).to.equal('[]');
    expect(ids((await a.request('GET', '/jobs?prefix=a.l')).text)).to.deep.equal(['a.l1', 'a.l2']);
    expect(ids((await a.request('GET', '/rules')).text).every((id) => id.startsWith('a.'))).to.equal(true);
    expect(ids((await b.request('GET', '/rules')).text)).to.include('b.lr');
    expect(ids((await admin.request('GET', '/rules')).text)).to.include.members(['a.rule', 'b.rule', 'b.lr']);
  });

  it('/stats is allowed for any token and reports auth_enabled 1', async () => {
    const res = await a.request('GET', '/stats');
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.text)).to.include({ auth_enabled: 1 });
  });

  it('the same tokens and store serve TCP', async () => {
    const c = await LineClient.connect(daemon.tcp);
    try {
      c.write('AUTH secret-b\n');
      expect(await c.readLine()).to.equal('OK');
      expect(await c.request('1', 'SET b.from.tcp 4070908800000000001')).to.deep.equal(['1 OK']);
      expect((await b.request('GET', '/jobs/b.from.tcp')).text).to.equal('{"id":"b.from.tcp","status":"planned","execution":4070908800000000001,"attempt":0}');
      expect((await a.request('GET', '/jobs/b.from.tcp')).status).to.equal(403);
      await b.request('PUT', '/jobs/b.from.http', { body: { execution: '2099-01-01T00:00:00.000000002Z' } });
      expect(await c.request('2', 'GET b.from.http')).to.deep.equal(['2 OK planned 4070908800000000002']);
    } finally {
      c.close();
    }
  });

  it('checked every response against the OpenAPI document', () => {
    expect(anon.checked + a.checked + b.checked + admin.checked).to.be.above(80);
  });
});
