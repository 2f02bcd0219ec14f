// HTTP connection handling on the real daemon: many concurrent keep-alive clients, slow and
// half-sent requests that must not block anyone, garbage that must not crash a worker, and a
// SIGTERM that idle keep-alive connections do not delay.
import { expect } from 'chai';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Daemon, type Address } from '../helpers/daemon.ts';
import { HttpApi } from './http-client.ts';

/** One request on a given agent; resolves with the status, body and whether the socket was reused. */
function call(addr: Address, agent: Agent, method: string, path: string, body?: string): Promise<{ status: number; text: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const req = httpRequest({ host: addr.host, port: addr.port, method, path, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, text, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function rawSocket(addr: Address): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(addr.port, addr.host, () => resolve(s));
    s.on('error', reject);
  });
}

describe('HTTP connections', function () {
  this.timeout(30000);
  let daemon: Daemon;

  before(async () => { daemon = await Daemon.start({ workers: 2, config: { http: { listen: '127.0.0.1:0' } } }); });
  after(async () => { await daemon?.stop(); });

  it('serves 50 concurrent keep-alive clients, each on one reused connection', async () => {
    const addr = daemon.http!;
    const clients = Array.from({ length: 50 }, (_, i) => i);
    const results = await Promise.all(clients.map(async (i) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const seen: Array<{ status: number; reused: boolean }> = [];
      try {
        for (let n = 0; n < 10; n++) {
          const id = `conc.c${i}.n${n}`;
          const put = await call(addr, agent, 'PUT', `/jobs/${id}`, `{"execution":"2099-01-01T00:00:00.${String(n).padStart(9, '0')}Z"}`);
          const get = await call(addr, agent, 'GET', `/jobs/${id}`);
          expect(get.text).to.equal(`{"id":"${id}","status":"planned","execution":4070908800${String(n).padStart(9, '0')},"attempt":0}`);
          seen.push(put, get);
        }
      } finally {
        agent.destroy();
      }
      return seen;
    }));
    for (const seen of results) {
      expect(seen.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
      expect(seen.slice(1).every((r) => r.reused), 'keep-alive').to.equal(true);
    }
    const api = new HttpApi(daemon.http!);
    const listed = JSON.parse((await api.request('GET', '/jobs?prefix=conc.')).text) as unknown[];
    api.close();
    expect(listed).to.have.length(500);
  });

  it('clients that send half a request (headers or body) do not block others', async () => {
    const addr = daemon.http!;
    const halfHeaders = await Promise.all([0, 1, 2].map(() => rawSocket(addr)));
    for (const s of halfHeaders) s.write('PUT /jobs/slow.a HTTP/1.1\r\nHost: x\r\nContent-Ty');
    const halfBodies = await Promise.all([0, 1, 2].map(() => rawSocket(addr)));
    for (const s of halfBodies) s.write('PUT /jobs/slow.b HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"execution":');
    const api = new HttpApi(addr);
    try {
      const started = Date.now();
      for (let n = 0; n < 20; n++) {
        expect((await api.request('PUT', `/jobs/fast.${n}`, { body: { execution: '2099-01-01T00:00:00Z' } })).status).to.equal(200);
      }
      expect(Date.now() - started).to.be.below(5000);
      expect((await api.request('GET', '/jobs/slow.b')).status, 'the half body was not applied').to.equal(404);
    } finally {
      api.close();
      for (const s of [...halfHeaders, ...halfBodies]) s.destroy();
    }
  });

  it('garbage on the socket gets a JSON 400 and the worker keeps serving', async () => {
    const addr = daemon.http!;
    const inputs = ['\x00\x01\x02\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', `GET /${'a'.repeat(20000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 'PUT /jobs/x HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n'];
    for (const input of inputs) {
      const s = await rawSocket(addr);
      const answer = await new Promise<string>((resolve) => {
        let out = '';
        s.setEncoding('utf8');
        s.on('data', (c: string) => { out += c; });
        s.on('close', () => resolve(out));
        s.write(input);
      });
      expect(answer, JSON.stringify(input.slice(0, 40))).to.match(/^HTTP\/1\.1 4\d\d /).and.match(/\r\n\r\n\{"error":"[^"]+"\}$/);
    }
    const api = new HttpApi(addr);
    expect((await api.request('GET', '/health')).status).to.equal(200);
    api.close();
  });

  it('SIGTERM is not held up by idle keep-alive connections', async () => {
    const d = await Daemon.start({ config: { http: { listen: '127.0.0.1:0' } } });
    const idle = await rawSocket(d.http!);
    idle.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => idle.once('data', r));
    const closed = new Promise((r) => idle.once('close', r));
    idle.resume();
    const started = Date.now();
    const { code } = await d.stop('SIGTERM');
    await closed;
    expect(code).to.equal(0);
    expect(Date.now() - started).to.be.below(4000);
  });
});
