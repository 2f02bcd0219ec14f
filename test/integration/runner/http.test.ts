import { expect } from 'chai';
import { outcomeSucceeded, type AttemptOutcome } from '../../../lib/domain/attempt.ts';
import { execFileSync } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import type { HttpMethod } from '../../../lib/domain/runner-spec.ts';
import { httpBody, runHttp } from '../../../lib/runner/http.ts';
import { runExecution } from '../../../lib/runner/run-by-kind.ts';
import { warmUpHttp } from '../../../lib/runner/http-warm-up.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { capturingContext, EXECUTION_NS, makeExecution, neverAborted, waitFor } from '../../helpers/runner-context.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A sink recording every request; the route decides the answer. */
class Sink {
  readonly seen: Seen[] = [];
  readonly hanging: ServerResponse[] = [];
  server: Server;
  port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
        this.answer(req.url!, res);
      });
    });
  }

  answer(url: string, res: ServerResponse): void {
    switch (url) {
      case '/ok': res.writeHead(200).end('fine'); return;
      case '/created': res.writeHead(201).end(); return;
      case '/no-content': res.writeHead(204).end(); return;
      case '/fail': res.writeHead(500).end('boom'); return;
      case '/not-found': res.writeHead(404).end(); return;
      case '/redirect': res.writeHead(302, { location: '/ok' }).end(); return;
      case '/hang': this.hanging.push(res); return;
      default: res.writeHead(400).end(); return;
    }
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function run(method: HttpMethod, url: string, opts: { timeoutMs?: number; jobId?: string; signal?: AbortSignal } = {}) {
  const { ctx, lines } = capturingContext(opts.timeoutMs ?? 5000);
  const spec = { type: 'http' as const, method, url };
  const outcome = runHttp(makeExecution(spec, opts.jobId), spec, ctx, opts.signal ?? neverAborted());
  return { result: outcome.then(outcomeSucceeded), outcome, lines };
}

describe('runner/http', function () {
  this.timeout(20000);
  let sink: Sink;
  beforeEach(async () => { sink = await new Sink().start(); });
  afterEach(async () => { await sink.stop(); });

  it('POST and PUT send exactly {"job_id":..,"execution":<ns>} as application/json', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      expect(await run(method, sink.url('/ok')).result).to.equal(true);
      const req = sink.seen.at(-1)!;
      expect(req.method).to.equal(method);
      expect(req.body.toString('utf8')).to.equal(`{"job_id":"job.test.1","execution":${EXECUTION_NS.toString()}}`);
      expect(req.headers['content-type']).to.equal('application/json');
      expect(req.headers['content-length']).to.equal(String(req.body.length));
    }
  });

  it('escapes the job id as JSON and keeps the nanoseconds exact', () => {
    const body = httpBody({ ...makeExecution({ type: 'http', method: 'POST', url: 'http://x' }, 'a"b\\c\n\u2028'), execution: -9223372036854775808n });
    expect(body).to.equal('{"job_id":"a\\"b\\\\c\\n\u2028","execution":-9223372036854775808}');
    expect((JSON.parse(body) as { job_id: string }).job_id).to.equal('a"b\\c\n\u2028');
  });

  it('GET and DELETE send no body', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      expect(await run(method, sink.url('/ok')).result).to.equal(true);
      const req = sink.seen.at(-1)!;
      expect(req.method).to.equal(method);
      expect(req.body.length).to.equal(0);
      expect(req.headers['content-type']).to.equal(undefined);
      expect(req.headers['transfer-encoding']).to.equal(undefined);
    }
  });

  it('treats every 2xx as success and anything else as failure', async () => {
    expect(await run('POST', sink.url('/created')).result).to.equal(true);
    expect(await run('DELETE', sink.url('/no-content')).result).to.equal(true);
    expect(await run('POST', sink.url('/fail')).result).to.equal(false);
    expect(await run('GET', sink.url('/not-found')).result).to.equal(false);
    expect(sink.seen.map((s) => s.url)).to.deep.equal(['/created', '/no-content', '/fail', '/not-found']); // no retries
  });

  it('gives the HTTP status as the outcome', async () => {
    expect(await run('POST', sink.url('/fail')).outcome).to.deep.equal({ kind: 'http_response', status: 500 });
    expect(await run('GET', sink.url('/created')).outcome).to.deep.equal({ kind: 'http_response', status: 201 });
    expect(await run('GET', sink.url('/redirect')).outcome).to.deep.equal({ kind: 'http_response', status: 302 });
  });

  it('does not follow redirects: 302 is failure and the target is never requested', async () => {
    expect(await run('GET', sink.url('/redirect')).result).to.equal(false);
    expect(await run('POST', sink.url('/redirect')).result).to.equal(false);
    expect(sink.seen.map((s) => s.url)).to.deep.equal(['/redirect', '/redirect']);
  });

  it('fails after the read timeout when the server accepts and never answers', async () => {
    const started = Date.now();
    const { result, outcome, lines } = run('POST', sink.url('/hang'), { timeoutMs: 300 });
    expect(await result).to.equal(false);
    expect(await outcome).to.deep.equal({ kind: 'network_error', error: 'read timeout: the socket was idle for 300 ms' });
    const took = Date.now() - started;
    expect(took).to.be.at.least(250);
    expect(took).to.be.below(3000);
    expect(sink.seen).to.have.length(1); // no retry
    expect(lines.some((l) => l.includes('http runner failed'))).to.equal(true);
  });

  it('fails when response headers trickle in slower than the read budget allows', async () => {
    // Never idle for the read timeout, yet never done: the connect + read deadline ends it.
    const timers: NodeJS.Timeout[] = [];
    const server = createNetServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\n');
      timers.push(setInterval(() => socket.write('X-Slow: 1\r\n'), 50));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const { result, lines } = run('GET', `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { timeoutMs: 300 });
      expect(await result).to.equal(false);
      expect(Date.now() - started).to.be.at.least(550).and.below(3000);
      expect(lines.join('\n')).to.include('no response within 600 ms');
    } finally {
      for (const t of timers) clearInterval(t);
      server.close();
    }
  });

  it('fails after the connect timeout when the TLS handshake never completes', async () => {
    const held: Socket[] = [];
    const server = createNetServer((socket) => { held.push(socket); }); // accepts TCP, never speaks TLS
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const { result, lines } = run('POST', `https://127.0.0.1:${(server.address() as AddressInfo).port}/`, { timeoutMs: 300 });
      expect(await result).to.equal(false);
      expect(Date.now() - started).to.be.at.least(250).and.below(3000);
      expect(lines.join('\n')).to.include('connect timeout');
    } finally {
      for (const s of held) s.destroy();
      server.close();
    }
  });

  it('reuses one keep-alive connection for requests one after another', async () => {
    let connections = 0;
    sink.server.on('connection', () => { connections++; });
    for (let i = 0; i < 5; i++) expect(await run('POST', sink.url('/ok')).result).to.equal(true);
    expect(sink.seen).to.have.length(5);
    expect(connections).to.equal(1);
  });

  it('closes a keep-alive connection left idle for 4 s, before the usual 5 s server timeout', async () => {
    let closedAt = 0;
    sink.server.on('connection', (socket) => socket.on('close', () => { closedAt = Date.now(); }));
    expect(await run('POST', sink.url('/ok')).result).to.equal(true);
    const doneAt = Date.now();
    await waitFor(() => closedAt > 0, 8000, 'the idle connection to close');
    expect(closedAt - doneAt).to.be.at.least(3500).and.below(5000);
  });

  it('once the runner is loaded, runExecution builds the request at once, inside the runner pool\'s budget for the turn', async () => {
    const { ctx } = capturingContext(5000);
    const spec = { type: 'http' as const, method: 'POST' as const, url: sink.url('/ok') };
    const ok = { kind: 'http_response', status: 200 };
    expect(await runExecution(makeExecution(spec, 'first'), ctx, neverAborted())).to.deep.equal(ok); // loads it
    let created = 0;
    const count = (): void => { created++; };
    diagnostics.subscribe('http.client.request.created', count);
    try {
      const outcome = runExecution(makeExecution(spec, 'second'), ctx, neverAborted());
      // The pool (lib/runner/pool.ts) times each start to yield to I/O every few ms. A request
      // built in a later microtask escaped that budget: a burst's 256 starts all ran before the
      // first socket connected (the first POST of a cold burst left 110-125 ms late).
      expect(created).to.equal(1);
      expect(await outcome).to.deep.equal(ok);
    } finally {
      diagnostics.unsubscribe('http.client.request.created', count);
    }
  });

  it('the warm-up at a runner child\'s start: POSTs through a pool, on spares, then several at a time on kept-alive and new connections, to a loopback server of its own, which is gone after; one log line', async () => {
    const { ctx, lines } = capturingContext(5000);
    const handles = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    const before = handles();
    await warmUpHttp(ctx, 5, 64); // 8 rounds of 8: spares in the 1st and 5th, closing answers in the 4th and 8th
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r['msg'])).to.deep.equal(['http runner warmed up']);
    expect(records[0]).to.include({ rounds: 5, streamed: 64, ok: 69, spares: 7 });
    // Kept-alive connections were reused: 5 spares, then each 4-round run opens at most its
    // first round's 8 (a reply reports at its headers, before its socket is free again: a
    // few more), where one connection per job would be 64.
    const connections = records[0]!['connections'] as number;
    expect(connections).to.be.at.least(5 + 16).and.below(5 + 40);
    await waitFor(() => handles() === before, 2000, 'the warm-up server to be closed'); // libuv closes it a turn later
  });

  it('fails on connection refused', async () => {
    const closed = await new Sink().start();
    const url = closed.url('/ok');
    await closed.stop();
    expect(await run('GET', url).result).to.equal(false);
    const outcome = await run('GET', url).outcome;
    expect(outcome.kind).to.equal('network_error');
    expect((outcome as { error: string }).error).to.match(/^connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });

  it('fails on a non-http URL or garbage, without throwing', async () => {
    expect(await run('GET', 'ftp://127.0.0.1/x').result).to.equal(false);
    expect(await run('GET', 'not a url').result).to.equal(false);
    expect(await run('GET', 'http://[::1').result).to.equal(false);
    expect(await run('GET', 'ftp://127.0.0.1/x').outcome).to.deep.equal({ kind: 'runner_error', error: 'http url must start with http:// or https://' });
  });

  it('aborting ends the attempt as failure', async () => {
    const controller = new AbortController();
    const { result, outcome } = run('GET', sink.url('/hang'), { signal: controller.signal });
    await waitFor(() => sink.hanging.length === 1, 5000, 'the request to arrive');
    controller.abort();
    expect(await result).to.equal(false);
    expect(await outcome).to.deep.equal({ kind: 'aborted' });
  });

  it('redacts userinfo of the URL in log lines', async () => {
    const { result, lines } = run('GET', `http://user:hunter2secret@127.0.0.1:${sink.port}/fail`);
    expect(await result).to.equal(false);
    expect(lines.length).to.be.above(0);
    expect(lines.join('\n')).to.not.include('hunter2secret');
    const closed = await new Sink().start();
    await closed.stop();
    const refused = run('GET', `http://user:hunter2secret@127.0.0.1:${closed.port}/x`);
    expect(JSON.stringify(await refused.outcome)).to.not.include('hunter2secret');
    expect(refused.lines.join('\n')).to.not.include('hunter2secret');
  });

  describe('https', () => {
    let key: Buffer;
    let cert: Buffer;
    before(function () {
      const dir = tempDir();
      try {
        execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
          '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      } catch {
        process.stderr.write('      skipped: openssl is not available to make a test certificate\n');
        this.skip();
      }
      key = readFileSync(join(dir, 'key.pem'));
      cert = readFileSync(join(dir, 'cert.pem'));
    });

    it('uses TLS and verifies the certificate: a self-signed server fails the job', async () => {
      let handshakeErrors = 0;
      let requests = 0;
      const server = createHttpsServer({ key, cert }, (_req, res) => { requests++; res.writeHead(200).end(); });
      server.on('tlsClientError', () => { handshakeErrors++; });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      try {
        const { result, lines } = run('POST', `https://127.0.0.1:${port}/ok`);
        expect(await result).to.equal(false);
        await waitFor(() => handshakeErrors > 0, 5000, 'the rejected TLS handshake');
        expect(requests).to.equal(0);
        expect(lines.join('\n')).to.match(/self[- ]signed/i);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });
});
