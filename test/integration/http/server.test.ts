// lib/http/server.ts + app.ts on loopback with a fake primary (dispatch): what the real daemon
// cannot be made to do on demand (a failing handler, a reply of the wrong kind, an internal
// error with details), the exact Commands the routes produce, slow clients and graceful close.
import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import type { Command, Reply } from '../../../lib/domain/command.ts';
import { buildTokenTable, type TokenTable } from '../../../lib/auth/verify.ts';
import { silentLogger } from '../../../lib/log.ts';
import { startServer, type HttpServer, type ServerLimits } from '../../../lib/http/server.ts';

type Dispatch = (cmd: Command) => Promise<Reply>;

async function start(dispatch: Dispatch, tokens: TokenTable | null = null, limits: Partial<ServerLimits> = {}): Promise<HttpServer> {
  return startServer({ dispatch, readiness: () => 'ready', tokens, version: '1.2.3', cluster: false }, silentLogger(), '127.0.0.1', 0, limits);
}

const DONE: Reply = { ok: true, kind: 'done' };

/** Raw socket helper: everything the server sent until it closed the connection. */
function rawExchange(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(data));
    let out = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => { out += c; });
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => { if (socket.closed) resolve(); else socket.once('close', () => resolve()); });
}

describe('http/server (fake primary)', () => {
  let server: HttpServer | null = null;
  afterEach(async () => { await server?.close(100); server = null; });

  const url = (path: string): string => `http://127.0.0.1:${server!.port}${path}`;

  it('answers 500 {"error":"internal"} when a handler rejects, and keeps serving', async () => {
    server = await start(() => Promise.reject(new Error('primary exploded')));
    const res = await fetch(url('/jobs/a'));
    expect(res.status).to.equal(500);
    expect(await res.text()).to.equal('{"error":"internal"}');
    expect((await fetch(url('/health'))).status).to.equal(200);
  });

  it('answers 500 when the primary replies with the wrong kind', async () => {
    server = await start(() => Promise.resolve(DONE));
    const res = await fetch(url('/jobs/a'));
    expect(res.status).to.equal(500);
    expect(await res.json()).to.deep.equal({ error: 'internal' });
  });

  it('maps error replies through the registry and never shows internal details', async () => {
    const replies: Reply[] = [
      { ok: false, code: 'internal', message: 'ENOSPC /var/lib/tickd/logfile' },
      { ok: false, code: 'not_found', message: 'job "a" does not exist' },
      { ok: false, code: 'invalid_args', message: 'something named' },
    ];
    server = await start(() => Promise.resolve(replies.shift()!));
    const got = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url('/jobs/a'));
      got.push([res.status, await res.text()]);
    }
    expect(got).to.deep.equal([
      [500, '{"error":"internal"}'],
      [404, '{"error":"job \\"a\\" does not exist"}'],
      [400, '{"error":"something named"}'],
    ]);
  });

  it('sends normalized, namespace-scoped commands to the primary', async () => {
    const seen: Command[] = [];
    const tokens = buildTokenTable([{ name: 'a', secret: 'sa', namespace: 'a.' }]);
    server = await start((cmd) => {
      seen.push(cmd);
      return Promise.resolve(cmd.op === 'job.list' ? { ok: true, kind: 'jobs', jobs: [], next: null } : DONE);
    }, tokens);
    const auth = { authorization: 'Bearer sa', 'content-type': 'application/json' };
    expect((await fetch(url('/jobs/a.1'), { method: 'PUT', headers: auth, body: '{"execution":"2030-01-02T05:04:05.000000001+02:00"}' })).status).to.equal(200);
    expect((await fetch(url('/rules/a.r'), { method: 'PUT', headers: auth, body: '{"pattern":"a.","runner":"awf","args":["wf","--input","k=v"]}' })).status).to.equal(200);
    expect((await fetch(url('/jobs?prefix=a.x'), { headers: auth })).status).to.equal(200);
    expect((await fetch(url('/jobs/b.1'), { method: 'DELETE', headers: auth })).status).to.equal(403);
    expect(seen).to.deep.equal([
      { op: 'job.set', id: 'a.1', execution: 1893553445000000001n },
      { op: 'rule.set', rule: { id: 'a.r', pattern: 'a.', runner: { type: 'awf', workflow: 'wf', inputs: ['k=v'] } } },
      { op: 'job.list', prefix: 'a.x', scope: 'a.', cursor: 0, limit: 1000 },
    ]);
  });

  it('answers unparsable requests with a JSON 400 and closes', async () => {
    server = await start(() => Promise.resolve(DONE));
    const out = await rawExchange(server.port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(out).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(out).to.match(/\r\n\r\n\{"error":"bad request"\}$/);
  });

  it('drops a client that never finishes its headers, while serving others', async () => {
    server = await start(() => Promise.resolve(DONE), null, { headersTimeoutMs: 300, requestTimeoutMs: 600, timeoutCheckIntervalMs: 50 });
    const slow = connect(server.port, '127.0.0.1');
    slow.on('error', () => {});
    slow.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    let answer = '';
    slow.on('data', (d: Buffer) => { answer += d.toString(); });
    for (let i = 0; i < 5; i++) expect((await fetch(url('/health'))).status).to.equal(200);
    await closed(slow);
    expect(answer).to.match(/^HTTP\/1\.1 408 /).and.match(/\{"error":"request timeout"\}$/);
  });

  describe('close(grace)', () => {
    it('closes idle keep-alive connections at once', async () => {
      server = await start(() => Promise.resolve(DONE));
      const socket = connect(server.port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      await new Promise((r) => socket.once('data', r));
      const t0 = Date.now();
      await server.close(5000);
      server = null;
      await closed(socket);
      expect(Date.now() - t0).to.be.below(2000);
    });

    it('lets an in-flight request finish, with Connection: close', async () => {
      let release: (reply: Reply) => void = () => {};
      let entered: () => void = () => {};
      const inside = new Promise<void>((r) => { entered = r; });
      server = await start(() => new Promise<Reply>((resolve) => { release = resolve; entered(); }));
      const pending = rawExchange(server.port, 'GET /jobs/a HTTP/1.1\r\nHost: x\r\n\r\n');
      await inside;
      const closing = server.close(5000);
      server = null;
      release({ ok: true, kind: 'job', job: { id: 'a', execution: 5n, status: 'planned' } });
      const out = await pending;
      await closing;
      expect(out).to.match(/^HTTP\/1\.1 200 OK\r\n/);
      expect(out.toLowerCase()).to.contain('connection: close');
      expect(out).to.match(/\{"id":"a","status":"planned","execution":5,"attempt":0\}$/);
    });

    it('destroys what is still running after the grace period', async () => {
      let entered: () => void = () => {};
      const inside = new Promise<void>((r) => { entered = r; });
      server = await start(() => { entered(); return new Promise<Reply>(() => {}); });
      const pending = rawExchange(server.port, 'GET /jobs/a HTTP/1.1\r\nHost: x\r\n\r\n');
      await inside;
      const t0 = Date.now();
      await server.close(200);
      server = null;
      expect(await pending).to.equal('');
      expect(Date.now() - t0).to.be.within(150, 3000);
    });
  });
});
