// Hostile and unusual HTTP clients against the real daemon, over bare sockets writing exact
// bytes: an Authorization header built to make a backtracking parser slow, requests Node would
// answer with an empty body or not at all (no Host, an unknown Expect, a Transfer-Encoding the
// parser rejects, CONNECT), and clients still sending a body when an early answer (405, 413)
// comes, which must read that answer whole instead of losing it to a reset.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { Daemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { exchangeOne, openSocket, parseResponses, readResponses, uploadThenRead, type RawResponse } from './http/raw-http.ts';

const TOKENS = '[token.a]\nsecret = "secret-a"\nnamespace = "a."\n';
const MiB = 1024 * 1024;

function expectJsonError(res: RawResponse, status: number, message: string | RegExp): void {
  expect(res.status, res.body).to.equal(status);
  expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
  const body = JSON.parse(res.body) as { error: unknown };
  expect(Object.keys(body)).to.deep.equal(['error']);
  if (typeof message === 'string') expect(body.error).to.equal(message);
  else expect(body.error).to.match(message);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('HTTP against hostile clients', function () {
  this.timeout(60000);
  let daemon: Daemon;
  let port: number;
  const sockets: Socket[] = [];

  before(async () => {
    const dir = tempDir();
    const authFile = join(dir, 'tokens.toml');
    writeFileSync(authFile, TOKENS);
    daemon = await Daemon.start({ dir, workers: 1, config: { http: { listen: '127.0.0.1:0' }, controller: { auth_file: authFile } } });
    port = daemon.http!.port;
  });
  afterEach(() => { for (const s of sockets.splice(0)) s.destroy(); });
  after(async () => { await daemon?.stop(); });

  it('answers a 16 KiB Authorization header of spaces about as fast as one of letters', async () => {
    // Same size, same path through the worker (401 before any dispatch): only the content
    // differs. A backtracking parse takes ~100 times longer on the spaces.
    const request = (secret: string): string => `GET /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\n\r\n`;
    const hostile = request(`x${' '.repeat(16000)}y`);
    const benign = request(`x${'a'.repeat(16000)}y`);
    const socket = await openSocket(port);
    sockets.push(socket);
    const time = async (req: string): Promise<number> => {
      const t0 = performance.now();
      socket.write(req);
      expectJsonError((await readResponses(socket, 1))[0]!, 401, 'unauthorized');
      return performance.now() - t0;
    };
    const hostileMs: number[] = [];
    const benignMs: number[] = [];
    for (let i = 0; i < 11; i++) {
      benignMs.push(await time(benign));
      hostileMs.push(await time(hostile));
    }
    // Medians of interleaved runs, so load on the machine weighs on both alike.
    expect(median(hostileMs), `hostile ${hostileMs.map((t) => t.toFixed(1)).join(' ')} / benign ${benignMs.map((t) => t.toFixed(1)).join(' ')}`)
      .to.be.below(10 * median(benignMs));
  });

  it('answers a request without Host with a JSON 400 and closes', async () => {
    expectJsonError(await exchangeOne(port, 'GET /health HTTP/1.1\r\n\r\n'), 400, 'Host header is required');
    // HTTP/1.0 has no Host requirement.
    const old = await exchangeOne(port, 'GET /health HTTP/1.0\r\n\r\n');
    expect([old.status, old.body]).to.deep.equal([200, '{"status":"ok"}']);
  });

  it('answers an Expect other than 100-continue with a JSON 417', async () => {
    expectJsonError(await exchangeOne(port, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n'), 417, 'Expect must be 100-continue');
  });

  it('answers a Transfer-Encoding not ending in chunked with a JSON 400 on every path, /ui/ and /docs/ too', async () => {
    for (const [method, path] of [['GET', '/ui/'], ['GET', '/docs/'], ['HEAD', '/ui/'], ['GET', '/health'], ['PUT', '/jobs/a.1'], ['GET', '/nowhere']] as const) {
      const res = await exchangeOne(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc`, method === 'HEAD');
      if (method === 'HEAD') expect([res.status, res.headers['content-type']]).to.deep.equal([400, 'application/json; charset=utf-8']);
      else expectJsonError(res, 400, 'Transfer-Encoding must end with chunked');
    }
    // What the parser itself rejects before any route still gets a JSON answer.
    expectJsonError(await exchangeOne(port, 'PUT /jobs/a.1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n'), 400, 'bad request');
  });

  it('answers CONNECT with a JSON 405 and closes', async () => {
    const res = await exchangeOne(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectJsonError(res, 405, 'method CONNECT not allowed');
    expect(res.headers['connection']).to.equal('close');
  });

  describe('an early answer to a client still sending its body', () => {
    const cases = [
      { name: '405 for a PUT on a GET-only path', status: 405, path: '/health', token: false },
      { name: '413 for a body over 1 MiB', status: 413, path: '/jobs/a.1', token: true },
    ];
    for (const c of cases) {
      for (const connection of ['close', 'keep-alive']) {
        it(`${c.name} (Connection: ${connection}) is read whole, not lost to a reset`, async () => {
          const size = 4 * MiB;
          const head = `PUT ${c.path} HTTP/1.1\r\nHost: x\r\nConnection: ${connection}\r\n${c.token ? 'Authorization: Bearer secret-a\r\n' : ''}`
            + `Content-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
          const { sent, error, answer } = await uploadThenRead(port, head, size);
          expect([sent, error], 'the whole body was taken').to.deep.equal([size, null]);
          const { responses, used } = parseResponses(answer);
          expect(used, 'one complete answer').to.equal(answer.length);
          expect(responses).to.have.length(1);
          expectJsonError(responses[0]!, c.status, /./);
        });
      }
    }

    it('stops reading a body that never ends after an early answer', async () => {
      // A keep-alive connection would otherwise read and discard it all; the server reads at
      // most a bounded amount (8 MiB) past its answer and closes.
      const size = 256 * MiB;
      const head = `PUT /health HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`;
      const { sent } = await uploadThenRead(port, head, size);
      expect(sent).to.be.below(64 * MiB);
    });
  });
});
