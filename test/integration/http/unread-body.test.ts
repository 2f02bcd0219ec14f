// lib/http/unread-body.ts and lib/http/linger.ts through startServer: an answer given before
// the request body was read keeps the connection for a small body (Node discards it) and
// closes it for a large or chunked one, announcing it in the answer; the closing connection
// reads what the client still sends for a bounded number of bytes and time only.
import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import type { Reply } from '../../../lib/domain/command.ts';
import { silentLogger } from '../../../lib/log.ts';
import { startServer, type HttpServer, type ServerLimits } from '../../../lib/http/server.ts';
import { DISCARD_BODY_BYTES } from '../../../lib/http/unread-body.ts';
import { closed, openSocket, parseResponses, readResponses, until, uploadThenRead } from './raw-http.ts';

const DONE: Reply = { ok: true, kind: 'done' };

describe('http/unread-body and linger', () => {
  let server: HttpServer | null = null;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await server?.close(100);
    server = null;
  });
  async function start(limits: Partial<ServerLimits> = {}): Promise<number> {
    server = await startServer({ dispatch: () => Promise.resolve(DONE), readiness: () => 'ready', tokens: null, version: '1', cluster: false }, silentLogger(), '127.0.0.1', 0, limits);
    return server.port;
  }
  async function socket(port: number): Promise<Socket> {
    const s = await openSocket(port);
    s.on('error', () => {});
    sockets.push(s);
    return s;
  }

  it(`keeps the connection after an early answer to a body of at most ${DISCARD_BODY_BYTES} bytes`, async () => {
    const s = await socket(await start());
    s.write(`PUT /health HTTP/1.1\r\nHost: x\r\nContent-Length: ${DISCARD_BODY_BYTES}\r\n\r\n`);
    const [early] = await readResponses(s, 1);
    expect([early!.status, early!.headers['connection']]).to.deep.equal([405, 'keep-alive']);
    s.write(Buffer.alloc(DISCARD_BODY_BYTES, 0x20));
    s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const [next] = await readResponses(s, 1);
    expect([next!.status, next!.body]).to.deep.equal([200, '{"status":"ok"}']);
  });

  for (const [what, framing] of [['a larger body', `Content-Length: ${DISCARD_BODY_BYTES + 1}`], ['a chunked body', 'Transfer-Encoding: chunked']]) {
    it(`closes the connection after an early answer to ${what}, saying so`, async () => {
      const s = await socket(await start());
      s.write(`PUT /health HTTP/1.1\r\nHost: x\r\n${framing}\r\n\r\n`);
      const [early] = await readResponses(s, 1);
      expect([early!.status, early!.headers['connection']]).to.deep.equal([405, 'close']);
      await closed(s);
    });
  }

  it('reads what the client still sends even when reading was stopped before the answer', async () => {
    // The PUT waits behind a held GET (maxInFlight 1), so the socket is paused when its 405
    // closes the connection: the linger must start reading again, or the client, still
    // sending, never takes the answer.
    let release: () => void = () => {};
    let seen = false;
    server = await startServer({
      dispatch: () => new Promise<Reply>((resolve) => { seen = true; release = () => resolve({ ok: true, kind: 'jobs', jobs: [], next: null }); }),
      readiness: () => 'ready', tokens: null, version: '1', cluster: false,
    }, silentLogger(), '127.0.0.1', 0, { maxInFlight: 1 });
    const size = 6 * 1024 * 1024;
    const upload = uploadThenRead(server.port, `GET /jobs HTTP/1.1\r\nHost: x\r\n\r\nPUT /health HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`, size);
    await until(() => seen, 'the GET is dispatched');
    release();
    const { sent, error, answer } = await upload;
    expect([sent, error]).to.deep.equal([size, null]);
    expect(parseResponses(answer).responses.map((r) => r.status)).to.deep.equal([200, 405]);
  });

  it('reads at most lingerBytes of what a client still sends after the answer, then closes', async () => {
    const port = await start({ lingerBytes: 256 * 1024 });
    const size = 64 * 1024 * 1024;
    const { sent } = await uploadThenRead(port, `PUT /health HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`, size);
    expect(sent).to.be.below(size);
  });

  it('closes after lingerMs a client that keeps its side open and trickles bytes', async () => {
    const port = await start({ lingerMs: 200, lingerBytes: 1024 * 1024 * 1024 });
    // allowHalfOpen: the client does not answer the server's FIN with its own.
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    sockets.push(s);
    let error: string | null = null;
    s.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? 'error'; });
    await new Promise((r) => s.once('connect', r));
    s.write('PUT /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
    const [early] = await readResponses(s, 1);
    expect(early!.status).to.equal(405);
    const trickle = (): void => { if (!s.destroyed) s.write('x', () => setTimeout(trickle, 5)); };
    trickle();
    await closed(s);
    expect(error, 'the server closed the connection').to.be.oneOf(['ECONNRESET', 'EPIPE']);
  });
});
