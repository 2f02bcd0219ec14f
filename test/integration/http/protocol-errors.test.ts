// lib/http/protocol-errors.ts through startServer: requests the routes never see get a JSON
// error and a closed connection, and the ones that merely look unusual still reach the routes.
import { expect } from 'chai';
import type { Reply } from '../../../lib/domain/command.ts';
import { silentLogger } from '../../../lib/log.ts';
import { startServer, type HttpServer } from '../../../lib/http/server.ts';
import { exchange, exchangeOne } from './raw-http.ts';

const DONE: Reply = { ok: true, kind: 'done' };

describe('http/protocol-errors', () => {
  let server: HttpServer | null = null;
  let port = 0;
  beforeEach(async () => {
    server = await startServer({ dispatch: () => Promise.resolve(DONE), readiness: () => 'ready', tokens: null, version: '1', cluster: false }, silentLogger(), '127.0.0.1', 0);
    port = server.port;
  });
  afterEach(async () => { await server?.close(100); server = null; });

  it('refuses a Transfer-Encoding whose last coding is not chunked, whatever the path', async () => {
    for (const te of ['gzip', 'identity', 'chunked, gzip', 'Chunked , gzip']) {
      const res = await exchangeOne(port, `GET /ui/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ${te}\r\n\r\n`);
      expect([res.status, res.headers['content-type'], res.headers['connection']], te).to.deep.equal([400, 'application/json; charset=utf-8', 'close']);
    }
  });

  it('lets a Transfer-Encoding ending in chunked through to the routes', async () => {
    for (const te of ['chunked', 'gzip, CHUNKED']) {
      const res = await exchangeOne(port, `PUT /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: ${te}\r\n\r\n0\r\n\r\n`);
      expect(res.status, te).to.equal(405);
    }
  });

  it('requires Host of HTTP/1.1 only', async () => {
    const res = await exchangeOne(port, 'GET /health HTTP/1.1\r\n\r\n');
    expect([res.status, res.body, res.headers['connection']]).to.deep.equal([400, '{"error":"Host header is required"}', 'close']);
    expect((await exchangeOne(port, 'GET /health HTTP/1.0\r\n\r\n')).status).to.equal(200);
  });

  it('answers Expect: 100-continue with 100 and then the route, any other Expect with a JSON 417', async () => {
    const body = '{"execution":"2030-01-01T00:00:00Z"}';
    const out = (await exchange(port, `PUT /jobs/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)).toString();
    expect(out).to.match(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    const res = await exchangeOne(port, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n');
    expect([res.status, res.body, res.headers['connection']]).to.deep.equal([417, '{"error":"Expect must be 100-continue"}', 'close']);
  });

  it('answers CONNECT with a JSON 405 and closes', async () => {
    const res = await exchangeOne(port, 'CONNECT localhost:1 HTTP/1.1\r\nHost: localhost:1\r\n\r\n');
    expect([res.status, res.body, res.headers['allow']]).to.deep.equal([405, '{"error":"method CONNECT not allowed"}', '']);
  });
});
