// The HTTP JSON interface on the real daemon without an auth_file
// (tickd-protocol(7) HTTP INTERFACE): the meta and job routes, ISO timestamps, exact integers on
// the raw body text, the same store as TCP, and protocol errors (405/404/413). Rules are in
// http-rules.test.ts. Every response is checked against the served OpenAPI document
// (http-client.ts).
import { expect } from 'chai';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { Daemon } from '../helpers/daemon.ts';
import type { LineClient } from '../helpers/client.ts';
import { VERSION } from '../../lib/version.ts';
import { STAT_KEYS } from '../../lib/domain/stat.ts';
import { startHttpDaemon, stopHttpDaemon, type HttpApi } from './http-client.ts';

const FAR = '2099-01-01T00:00:00Z';
const FAR_NS = '4070908800000000000';

describe('HTTP interface', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let api: HttpApi;
  let tcp: LineClient;

  before(async () => ({ daemon, api, tcp } = await startHttpDaemon()));
  after(() => stopHttpDaemon({ daemon, api, tcp }));

  describe('meta routes', () => {
    it('GET /health -> 200 {"status":"ok"} as application/json', async () => {
      const res = await api.request('GET', '/health');
      expect(res.status).to.equal(200);
      expect(res.text).to.equal('{"status":"ok"}');
      expect(res.headers['content-type']).to.match(/^application\/json/);
    });

    it('GET /openapi.json -> a valid OpenAPI 3.1.1 document with the product version (then every response is checked against it)', async () => {
      const res = await api.request('GET', '/openapi.json');
      expect(res.status).to.equal(200);
      const doc = JSON.parse(res.text) as { openapi: string; info: { version: string }; security?: unknown };
      expect(doc.openapi).to.equal('3.1.1');
      expect(doc.info.version).to.equal(VERSION);
      expect(doc.security, 'no auth_file: open').to.equal(undefined);
      await SwaggerParser.validate(structuredClone(doc) as never);
      api.useDocument(doc);
    });

    it('GET /stats -> the 15 STAT values in order, numbers exact', async () => {
      const res = await api.request('GET', '/stats');
      expect(res.status).to.equal(200);
      const stats = JSON.parse(res.text) as Record<string, unknown>;
      expect(Object.keys(stats)).to.deep.equal([...STAT_KEYS]);
      expect(stats).to.include({ persistence: 'memory', auth_enabled: 0, tls_enabled: 0, framerate: 512 });
      expect(res.text).to.match(/^\{"uptime_ns":[1-9][0-9]*,/);
      expect(stats['compression']).to.be.oneOf(['idle', 'running', 'success', 'failure']);
    });
  });

  describe('jobs', () => {
    it('PUT -> 200 {"id","status","execution","attempt"}, execution an exact integer in the raw text', async () => {
      const res = await api.request('PUT', '/jobs/exact.one', { body: { execution: '2026-04-10T12:00:00.123456789Z' } });
      expect(res.status).to.equal(200);
      expect(res.text).to.equal('{"id":"exact.one","status":"planned","execution":1775822400123456789,"attempt":0}');
      const got = await api.request('GET', '/jobs/exact.one');
      expect(got.status).to.equal(200);
      // A time in the past: by now the job may have come due, failed (no rule) and got its last_attempt.
      expect(got.text).to.match(/^\{"id":"exact\.one","status":"[a-z]+","execution":1775822400123456789,"attempt":[01](,"last_attempt":\{.*\})?\}$/);
    });

    it('GET returns the job as stored; DELETE -> 204 without a body, then 404', async () => {
      expect((await api.request('PUT', '/jobs/crud.a', { body: { execution: FAR } })).status).to.equal(200);
      const got = await api.request('GET', '/jobs/crud.a');
      expect(got.text).to.equal(`{"id":"crud.a","status":"planned","execution":${FAR_NS},"attempt":0}`);
      const del = await api.request('DELETE', '/jobs/crud.a');
      expect(del.status).to.equal(204);
      expect(del.text).to.equal('');
      const again = await api.request('DELETE', '/jobs/crud.a');
      expect([again.status, again.text]).to.deep.equal([404, '{"error":"job \\"crud.a\\" does not exist"}']);
      expect((await api.request('GET', '/jobs/crud.a')).text).to.equal('{"error":"job \\"crud.a\\" does not exist"}');
    });

    it('PUT replaces an existing job (create or update)', async () => {
      await api.request('PUT', '/jobs/repl.a', { body: { execution: FAR } });
      await api.request('PUT', '/jobs/repl.a', { body: { execution: '2099-01-01T00:00:01Z' } });
      expect((await api.request('GET', '/jobs/repl.a')).text).to.equal('{"id":"repl.a","status":"planned","execution":4070908801000000000,"attempt":0}');
    });

    it('HEAD /jobs/{id} -> the GET status and headers, no body', async () => {
      await api.request('PUT', '/jobs/head.a', { body: { execution: FAR } });
      const res = await api.request('HEAD', '/jobs/head.a');
      expect(res.status).to.equal(200);
      expect(res.text).to.equal('');
      expect(Number(res.headers['content-length'])).to.be.above(0);
      expect((await api.request('HEAD', '/jobs/head.none')).status).to.equal(404);
    });

    it('ISO 8601 forms: Z, offsets honoured, 9 fraction digits, a space separator', async () => {
      const cases: Array<[string, string]> = [
        ['2099-01-01T00:00:00Z', FAR_NS],
        ['2099-01-01T02:00:00+02:00', FAR_NS],
        ['2098-12-31T19:30:00-04:30', FAR_NS],
        ['2099-01-01t00:00:00z', FAR_NS],
        ['2099-01-01 00:00:00Z', FAR_NS],
        ['2099-01-01T00:00:00.123456789Z', '4070908800123456789'],
        ['2099-01-01T00:00:00.5+00:00', '4070908800500000000'],
      ];
      for (const [iso, ns] of cases) {
        const res = await api.request('PUT', '/jobs/iso.a', { body: { execution: iso } });
        expect([res.status, res.text], iso).to.deep.equal([200, `{"id":"iso.a","status":"planned","execution":${ns},"attempt":0}`]);
      }
    });

    it('PUT 400s name the field: missing, wrong type, no zone, impossible dates, out of range', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{}, /^execution is required$/],
        [{ execution: 1775822400000000000 }, /^execution must be an ISO 8601 string/],
        [{ execution: null }, /^execution must be/],
        [{ execution: '2099-01-01T00:00:00' }, /^execution: .*zone/],
        [{ execution: '2026-02-31T00:00:00Z' }, /^execution: day 31 out of range/],
        [{ execution: '2026-04-10T24:00:00Z' }, /^execution: hour/],
        [{ execution: '2263-01-01T00:00:00Z' }, /^execution: out of range/],
        [{ execution: '1775822400123456789' }, /^execution: /],
        [{ execution: 'soon' }, /^execution: /],
        [{ execution: '2099-01-01T00:00:00.1234567891Z' }, /^execution: .*9 digits/],
        [[], /^request body must be a JSON object$/],
        ['"str"', /^request body must be a JSON object$/],
      ];
      for (const [body, re] of cases) {
        const res = await api.request('PUT', '/jobs/bad.a', { body: typeof body === 'string' ? body : JSON.stringify(body) });
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect((JSON.parse(res.text) as { error: string }).error, JSON.stringify(body)).to.match(re);
      }
      expect((await api.request('GET', '/jobs/bad.a')).status).to.equal(404);
    });

    it('malformed JSON and an empty body -> 400', async () => {
      for (const body of ['{"execution":', '', 'nul', '{"execution":"2099-01-01T00:00:00Z"}}']) {
        const res = await api.request('PUT', '/jobs/bad.json', { body });
        expect(res.status, body).to.equal(400);
        expect(JSON.parse(res.text)).to.have.keys('error');
      }
    });

    it('415 when the body is not application/json; a charset parameter is fine', async () => {
      const body = { execution: FAR };
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', null]) {
        const res = await api.request('PUT', '/jobs/ct.a', { body, contentType });
        expect([res.status, res.text], String(contentType)).to.deep.equal([415, '{"error":"Content-Type must be application/json"}']);
      }
      expect((await api.request('PUT', '/jobs/ct.a', { body, contentType: 'application/json; charset=UTF-8' })).status).to.equal(200);
    });

    it('path ids are percent-decoded, then validated like TCP identifiers (400 naming the identifier)', async () => {
      expect((await api.request('PUT', '/jobs/pct%2Eone%3Atwo', { body: { execution: FAR } })).status).to.equal(200);
      expect((await api.request('GET', '/jobs/pct.one:two')).status).to.equal(200);
      for (const path of ['/jobs/a%2Fb', '/jobs/a%20b', '/jobs/%ZZ', '/jobs/caf%C3%A9', `/jobs/${'x'.repeat(1025)}`, '/jobs/a+b']) {
        const res = await api.request('GET', path);
        expect(res.status, path).to.equal(400);
        expect((JSON.parse(res.text) as { error: string }).error, path).to.match(/^job identifier /);
      }
      expect((await api.request('PUT', `/jobs/${'x'.repeat(1024)}`, { body: { execution: FAR } })).status).to.equal(200);
    });

    it('GET /jobs lists all jobs, or those under ?prefix=; no match is []', async () => {
      for (const id of ['lst.a', 'lst.b', 'lstx.c']) await api.request('PUT', `/jobs/${id}`, { body: { execution: FAR } });
      const all = JSON.parse((await api.request('GET', '/jobs')).text) as Array<{ id: string }>;
      expect(all.map((j) => j.id)).to.include.members(['lst.a', 'lst.b', 'lstx.c']);
      const some = await api.request('GET', '/jobs?prefix=lst.');
      expect((JSON.parse(some.text) as Array<{ id: string }>).map((j) => j.id).sort()).to.deep.equal(['lst.a', 'lst.b']);
      expect(some.text).to.contain(`"execution":${FAR_NS}`);
      expect((await api.request('GET', '/jobs?prefix=nothing.here')).text).to.equal('[]');
      expect(JSON.parse((await api.request('GET', '/jobs?prefix=')).text)).to.have.length(all.length);
      expect((await api.request('GET', '/jobs?prefix=a/b')).status).to.equal(400);
      expect((await api.request('GET', '/jobs?prefix=a&prefix=b')).status).to.equal(400);
    });
  });

  describe('same store as TCP', () => {
    it('SET over TCP is read over HTTP, and PUT over HTTP is read over TCP', async () => {
      expect(await tcp.request('1', 'SET both.tcp 4070908800123456789')).to.deep.equal(['1 OK']);
      expect((await api.request('GET', '/jobs/both.tcp')).text).to.equal('{"id":"both.tcp","status":"planned","execution":4070908800123456789,"attempt":0}');
      await api.request('PUT', '/jobs/both.http', { body: { execution: '2099-01-01T01:00:00.000000007+01:00' } });
      expect(await tcp.request('2', 'GET both.http')).to.deep.equal(['2 OK planned 4070908800000000007']);
      expect((await api.request('DELETE', '/jobs/both.tcp')).status).to.equal(204);
      expect(await tcp.request('3', 'GET both.tcp')).to.deep.equal(['3 ERROR not_found job "both.tcp" does not exist']);
    });
  });

  describe('protocol errors', () => {
    it('a method a path does not offer -> 405 with Allow', async () => {
      const cases: Array<[string, string, string]> = [
        ['POST', '/jobs/a', 'GET, HEAD, PUT, DELETE'],
        ['PATCH', '/rules/a', 'GET, HEAD, PUT, DELETE'],
        ['DELETE', '/jobs', 'GET, HEAD'],
        ['PUT', '/health', 'GET, HEAD'],
        ['POST', '/openapi.json', 'GET, HEAD'],
        ['OPTIONS', '/stats', 'GET, HEAD'],
      ];
      for (const [method, path, allow] of cases) {
        const res = await api.request(method, path, { body: '{}' });
        expect([res.status, res.headers['allow']], `${method} ${path}`).to.deep.equal([405, allow]);
        expect(JSON.parse(res.text)).to.have.keys('error');
      }
    });

    it('an unknown path -> 404 {"error"}', async () => {
      for (const path of ['/', '/nope', '/jobs/a/b', '/v1/jobs/a']) {
        const res = await api.request('GET', path);
        expect([res.status, JSON.parse(res.text)], path).to.deep.equal([404, { error: 'not found' }]);
      }
    });

    it('a body over 1 MiB -> 413; exactly 1 MiB is accepted', async () => {
      const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
      big.write('{"execution":"2099-01-01T00:00:00Z"}', 0);
      const res = await api.request('PUT', '/jobs/big.a', { body: big });
      expect(res.status).to.equal(413);
      expect(JSON.parse(res.text)).to.have.keys('error');
      const exact = big.subarray(0, 1024 * 1024);
      expect((await api.request('PUT', '/jobs/big.a', { body: exact })).status).to.equal(200);
    });

    it('a chunked body over 1 MiB -> 413', async () => {
      const res = await api.request('PUT', '/rules/big.r', { body: Buffer.alloc(2 * 1024 * 1024, 0x20), headers: { 'transfer-encoding': 'chunked' } });
      expect(res.status).to.equal(413);
    });

    it('checked every response above against the OpenAPI document', () => {
      expect(api.checked).to.be.above(50);
    });
  });
});
