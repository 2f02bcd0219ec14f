// Connections opened ahead of a job (lib/runner/http-preconnect.ts, prepareHttp in
// lib/runner/http.ts), against real servers on loopback: the request that follows uses the
// connection made ahead, a spare is never doubled, expires unused, and a spare that fails
// changes nothing for the request.
import { expect } from 'chai';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, createServer, request, type Server } from 'node:http';
import { Agent as HttpsAgent, createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { outcomeSucceeded } from '../../../lib/domain/attempt.ts';
import type { RunnerSpec } from '../../../lib/domain/runner-spec.ts';
import { prepareHttp, runHttp } from '../../../lib/runner/http.ts';
import { preconnecting } from '../../../lib/runner/http-preconnect.ts';
import { capturingContext, makeExecution, neverAborted, waitFor } from '../../helpers/runner-context.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'tls');

/** A server that answers 204 and notes when each connection was accepted and closed. */
async function listening(server: Server): Promise<{ port: number; accepted: number[]; closed: () => number }> {
  const accepted: number[] = [];
  let closed = 0;
  server.on(server instanceof tls.Server ? 'secureConnection' : 'connection', (s: Socket) => {
    accepted.push(performance.now());
    s.on('close', () => { closed++; });
  });
  server.on('request', (req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, accepted, closed: () => closed };
}

async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

function post(url: string): Extract<RunnerSpec, { type: 'http' }> {
  return { type: 'http', method: 'POST', url };
}

describe('http runner: a connection opened ahead of the job', function () {
  this.timeout(20000);

  it('the job\'s request goes out on the connection made ahead: one connection, accepted before the request was built', async () => {
    const server = createServer();
    const s = await listening(server);
    try {
      // A port of its own: no keep-alive socket of another test can be there already.
      const spec = post(`http://127.0.0.1:${s.port}/hook`);
      const { ctx } = capturingContext();
      prepareHttp(spec, ctx);
      prepareHttp(spec, ctx); // a second announcement makes no second connection
      await waitFor(() => s.accepted.length === 1, 5000, 'the connection made ahead');
      const built = performance.now();
      const outcome = await runHttp(makeExecution(spec), spec, ctx, neverAborted());
      expect(outcome).to.deep.equal({ kind: 'http_response', status: 204 });
      expect(s.accepted, 'no connection but the one made ahead').to.have.length(1);
      expect(s.accepted[0]).to.be.below(built);
      prepareHttp(spec, ctx); // the agent holds a keep-alive socket to the origin now
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(s.accepted, 'none while a keep-alive socket is there').to.have.length(1);
    } finally {
      await shut(server);
    }
  });

  it('an unused spare is closed after the idle bound, and a later request connects as usual', async () => {
    const server = createServer();
    const s = await listening(server);
    const agent = preconnecting(new HttpAgent({ keepAlive: true }));
    try {
      agent.preconnect(new URL(`http://127.0.0.1:${s.port}/x`), 5000, 150);
      expect(agent.spareCount()).to.equal(1);
      await waitFor(() => s.closed() === 1, 5000, 'the idle spare to be closed');
      expect(agent.spareCount()).to.equal(0);
      const req = request(`http://127.0.0.1:${s.port}/x`, { method: 'POST', agent });
      req.end();
      const [res] = await once(req, 'response');
      expect(res.statusCode).to.equal(204);
      expect(s.accepted).to.have.length(2);
    } finally {
      agent.destroy();
      await shut(server);
    }
  });

  it('a spare that cannot connect is dropped without an error, and a later request fails as it would have', async () => {
    const server = createServer();
    const s = await listening(server);
    await shut(server); // nothing listens on the port any more
    const agent = preconnecting(new HttpAgent({ keepAlive: true }));
    agent.preconnect(new URL(`http://127.0.0.1:${s.port}/gone`), 5000, 4000);
    await waitFor(() => agent.spareCount() === 0, 5000, 'the refused spare to be dropped');
    const req = request(`http://127.0.0.1:${s.port}/gone`, { method: 'POST', agent });
    req.end();
    const [err] = await once(req, 'error');
    expect((err as NodeJS.ErrnoException).code).to.equal('ECONNREFUSED');
  });

  it('a spare the server wrote to before any request (a 408 on an idle connection) is not handed to the job', async () => {
    const server = createServer();
    let connections = 0;
    server.on('connection', (sock: Socket) => {
      if (++connections === 1) sock.end('HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n');
    });
    const s = await listening(server);
    try {
      const spec = post(`http://127.0.0.1:${s.port}/hook`);
      const { ctx } = capturingContext();
      prepareHttp(spec, ctx);
      await waitFor(() => s.accepted.length === 1, 5000, 'the connection made ahead');
      await new Promise((resolve) => setTimeout(resolve, 100)); // the 408 reaches the spare
      const outcome = await runHttp(makeExecution(spec), spec, ctx, neverAborted());
      expect(outcome, 'answered on a new connection, not the 408 read off the spare').to.deep.equal({ kind: 'http_response', status: 204 });
      expect(connections).to.equal(2);
    } finally {
      await shut(server);
    }
  });

  describe('https', () => {
    const key = readFileSync(join(FIXTURES, 'server.key'));
    const cert = readFileSync(join(FIXTURES, 'server.crt'));
    const ca = readFileSync(join(FIXTURES, 'ca.crt'), 'utf8');

    it('a TLS spare is taken after its handshake: one TLS connection in all', async () => {
      const server = createHttpsServer({ key, cert });
      const s = await listening(server);
      const trusted = tls.getCACertificates('default');
      tls.setDefaultCACertificates([...trusted, ca]);
      try {
        const spec = post(`https://127.0.0.1:${s.port}/hook`);
        const { ctx } = capturingContext();
        prepareHttp(spec, ctx);
        await waitFor(() => s.accepted.length === 1, 5000, 'the TLS connection made ahead');
        await new Promise((resolve) => setTimeout(resolve, 100));
        const outcome = await runHttp(makeExecution(spec), spec, ctx, neverAborted());
        expect(outcome).to.deep.equal({ kind: 'http_response', status: 204 });
        expect(outcomeSucceeded(outcome)).to.equal(true);
        expect(s.accepted, 'one TLS connection in all').to.have.length(1);
      } finally {
        tls.setDefaultCACertificates(trusted);
        await shut(server);
      }
    });

    it('with the agent\'s own TLS options the spare is found under the same pool key', async () => {
      const server = createHttpsServer({ key, cert });
      const s = await listening(server);
      const agent = preconnecting(new HttpsAgent({ keepAlive: true, ca }));
      try {
        agent.preconnect(new URL(`https://localhost:${s.port}/x`), 5000, 4000);
        await waitFor(() => s.accepted.length === 1, 5000, 'the TLS connection made ahead');
        const req = httpsRequest(`https://localhost:${s.port}/x`, { method: 'POST', agent });
        req.end();
        const [res] = await once(req, 'response');
        expect(res.statusCode).to.equal(204);
        expect(agent.spareCount()).to.equal(0);
        expect(s.accepted).to.have.length(1);
      } finally {
        agent.destroy();
        await shut(server);
      }
    });
  });
});
