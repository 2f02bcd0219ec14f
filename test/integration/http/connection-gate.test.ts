// lib/http/connection-gate.ts through startServer with a fake primary whose replies the test
// releases: one connection that pipelines requests and reads no answers holds at most
// MAX_IN_FLIGHT dispatches and stops being read, other connections are served meanwhile, and
// everything is answered in order once the replies come.
import { expect } from 'chai';
import type { Socket } from 'node:net';
import type { Command, Reply } from '../../../lib/domain/command.ts';
import { silentLogger } from '../../../lib/log.ts';
import { startServer, type HttpServer, type ServerLimits } from '../../../lib/http/server.ts';
import { openSocket, readResponses, until } from './raw-http.ts';

const MAX_IN_FLIGHT = 16;

/** A primary whose replies to listings of prefixes starting with `p` wait for release(). */
class HeldPrimary {
  held = 0;
  private waiting: Array<() => void> = [];
  private released = false;

  readonly dispatch = (cmd: Command): Promise<Reply> => {
    const prefix = cmd.op === 'job.list' ? cmd.prefix : '';
    const reply: Reply = { ok: true, kind: 'jobs', jobs: [{ id: prefix || 'none', execution: 1n, status: 'planned' }], next: null };
    if (this.released || !prefix.startsWith('p')) return Promise.resolve(reply);
    this.held++;
    return new Promise((resolve) => this.waiting.push(() => resolve(reply)));
  };

  release(): void {
    this.released = true;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

/**
 * Round trips on `other` until `value()` has not changed over five of them; returns it. A
 * connection the server still reads keeps changing what its client could send.
 */
async function settled(other: Socket, value: () => number): Promise<number> {
  let last = -1;
  for (let same = 0; same < 5;) {
    other.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect((await readResponses(other, 1))[0]!.status).to.equal(200);
    same = value() === last ? same + 1 : 0;
    last = value();
  }
  return last;
}

/**
 * Writes `data` 64 KiB at a time, each piece once the kernel took the last (a stream would
 * merge queued pieces into one write); returns how many bytes the kernel has taken so far.
 */
function writeInPieces(socket: Socket, data: Buffer): () => number {
  let sent = 0;
  const next = (): void => {
    if (sent >= data.length || socket.destroyed) return;
    const piece = data.subarray(sent, sent + 65536);
    socket.write(piece, (err) => {
      if (err) return;
      sent += piece.length;
      next();
    });
  };
  next();
  return () => sent;
}

const get = (path: string, pad = ''): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n${pad === '' ? '' : `X-Pad: ${pad}\r\n`}\r\n`;

describe('http/connection-gate (pipelining without reading)', function () {
  this.timeout(60000);
  let server: HttpServer | null = null;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await server?.close(100);
    server = null;
  });

  async function start(dispatch: (cmd: Command) => Promise<Reply>, limits: Partial<ServerLimits> = {}): Promise<HttpServer> {
    server = await startServer({ dispatch, readiness: () => 'ready', tokens: null, version: '1', cluster: false }, silentLogger(), '127.0.0.1', 0, { maxInFlight: MAX_IN_FLIGHT, ...limits });
    return server;
  }
  async function socket(port: number): Promise<Socket> {
    const s = await openSocket(port);
    s.on('error', () => {});
    sockets.push(s);
    return s;
  }

  it('dispatches at most 16 of 2 000 pipelined GET /jobs, stops reading, serves others, then answers all in order', async () => {
    const primary = new HeldPrimary();
    const { port } = await start(primary.dispatch);
    const greedy = await socket(port);
    greedy.pause();
    let received = 0;
    greedy.on('data', (c: Buffer) => { received += c.length; });
    // ~12 KiB of header each, 24 MiB in all: far more than the kernel buffers between the two
    // ends hold, so the write can only complete if the server keeps reading.
    const pad = 'a'.repeat(12 * 1024);
    const ids = Array.from({ length: 2000 }, (_, i) => `p${String(i).padStart(4, '0')}`);
    const pipeline = Buffer.from(ids.map((id) => get(`/jobs?prefix=${id}`, pad)).join(''));
    const sentSoFar = writeInPieces(greedy, pipeline);

    await until(() => primary.held >= MAX_IN_FLIGHT, 'the first 16 are dispatched');
    const other = await socket(port);
    for (let i = 0; i < 3; i++) {
      other.write(get('/jobs?prefix=other'));
      const [list] = await readResponses(other, 1);
      expect([list!.status, list!.body]).to.deep.equal([200, '[{"id":"other","status":"planned","execution":1,"attempt":0}]']);
    }
    const sent = await settled(other, sentSoFar);
    expect(sent, 'the server stopped reading the pipelining connection').to.be.below(pipeline.length);
    expect(primary.held, 'dispatched from the pipelining connection').to.equal(MAX_IN_FLIGHT);
    expect(received, 'nothing answered yet').to.equal(0);

    primary.release();
    const responses = await readResponses(greedy, ids.length);
    expect(responses.map((r) => r.status)).to.deep.equal(ids.map(() => 200));
    expect(responses.map((r) => (JSON.parse(r.body) as Array<{ id: string }>)[0]!.id)).to.deep.equal(ids);
  });

  it('stays paused while a waiting request\'s body is still coming', async () => {
    // Node asks the socket for more after every parsed message and whenever a body is pushed;
    // the last word must stay with the gate, or the waiting PUT's 64 MiB body would be read
    // into memory.
    const primary = new HeldPrimary();
    const { port } = await start(primary.dispatch);
    const greedy = await socket(port);
    greedy.pause();
    const gets = Array.from({ length: MAX_IN_FLIGHT + 4 }, (_, i) => get(`/jobs?prefix=p${i}`)).join('');
    const size = 64 * 1024 * 1024;
    const head = `${gets}PUT /jobs/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    greedy.write(head);
    const sentSoFar = writeInPieces(greedy, Buffer.alloc(size, 0x20));
    await until(() => primary.held >= MAX_IN_FLIGHT, 'the first 16 are dispatched');
    const other = await socket(port);
    const sent = await settled(other, sentSoFar);
    expect(sent, 'the server stopped reading the pipelining connection').to.be.below(size);
    expect(primary.held).to.equal(MAX_IN_FLIGHT);
    primary.release();
    const responses = await readResponses(greedy, MAX_IN_FLIGHT + 5);
    expect(responses.map((r) => r.status)).to.deep.equal([...Array<number>(MAX_IN_FLIGHT + 4).fill(200), 413]);
  });

  it('stops reading a connection whose unread answers pass 1 MiB, and resumes as they are read', async () => {
    // Every answer is ~100 KiB; the primary answers at once.
    const big: Reply = { ok: true, kind: 'jobs', jobs: Array.from({ length: 2000 }, (_, i) => ({ id: `big.${String(i).padStart(40, '0')}`, execution: 1n, status: 'planned' })), next: null };
    let dispatched = 0;
    const { port } = await start(() => { dispatched++; return Promise.resolve(big); });
    const count = 400;
    const greedy = await socket(port);
    greedy.pause();
    greedy.write(get('/jobs?prefix=big.').repeat(count));
    const other = await socket(port);
    await settled(other, () => dispatched);
    // 400 answers of ~100 KiB are ~40 MiB: the kernel buffers hold a few MiB of them.
    expect(dispatched, 'dispatches while the answers are not read').to.be.below(count);
    const responses = await readResponses(greedy, count);
    expect(responses.every((r) => r.status === 200 && r.body.length > 100_000)).to.equal(true);
    expect(dispatched).to.equal(count);
  });

  it('resumes reading for the body of a request that had to wait', async () => {
    const primary = new HeldPrimary();
    const seen: Command[] = [];
    const { port } = await start((cmd) => { seen.push(cmd); return cmd.op === 'job.set' ? Promise.resolve({ ok: true, kind: 'done' }) : primary.dispatch(cmd); }, { maxInFlight: 1 });
    const s = await socket(port);
    const body = '{"execution":"2030-01-01T00:00:00Z"}';
    s.write(get('/jobs?prefix=p1') + `PUT /jobs/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    await until(() => primary.held === 1, 'the listing is dispatched');
    primary.release();
    const [list] = await readResponses(s, 1);
    expect(list!.status).to.equal(200);
    s.write(body.slice(10));
    const [put] = await readResponses(s, 1);
    expect([put!.status, put!.body]).to.deep.equal([200, '{"id":"a","status":"planned","execution":1893456000000000000,"attempt":0}']);
    expect(seen.map((c) => c.op)).to.deep.equal(['job.list', 'job.set']);
  });
});
