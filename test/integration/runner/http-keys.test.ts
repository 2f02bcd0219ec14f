// What the http runner tells a receiver to deduplicate on (doc/execution.md "Keys to
// deduplicate on"), and the Retry-After of a 429 or 503 kept in the outcome.
import { expect } from 'chai';
import type { AttemptOutcome } from '../../../lib/domain/attempt.ts';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { headerValue, runHttp } from '../../../lib/runner/http.ts';
import { executionKey } from '../../../lib/runner/execution-key.ts';
import { capturingContext, EXECUTION_NS, makeExecution, neverAborted } from '../../helpers/runner-context.ts';

interface Answer {
  status: number;
  headers?: Record<string, string>;
}

describe('runner/http: keys to deduplicate on, Retry-After', function () {
  this.timeout(20000);
  let server: Server;
  let port = 0;
  const seen: IncomingHttpHeaders[] = [];
  let answer: Answer = { status: 200 };

  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => res.writeHead(answer.status, answer.headers ?? {}).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function run(jobId: string, attemptNo?: number, method: 'POST' | 'GET' = 'POST'): Promise<AttemptOutcome> {
    const { ctx } = capturingContext();
    const spec = { type: 'http' as const, method, url: `http://127.0.0.1:${port}/hook` };
    const exec = { ...makeExecution(spec, jobId), ...(attemptNo === undefined ? {} : { attemptNo }) };
    return runHttp(exec, spec, ctx, neverAborted());
  }

  function answering(a: Answer): Promise<AttemptOutcome> {
    answer = a;
    return run('job.retry.after');
  }

  it('sends Idempotency-Key, Tickd-Job and Tickd-Attempt: attempt 1 when the execution has no number', async () => {
    answer = { status: 200 };
    await run('job.keys:1', undefined, 'GET');
    await run('job.keys:1', 3);
    const [first, third] = seen.slice(-2);
    expect(first!['idempotency-key']).to.equal(executionKey('job.keys:1', EXECUTION_NS, 1)).and.match(/^[0-9a-f]{32}$/);
    expect(first!['tickd-job']).to.equal('job.keys:1');
    expect(first!['tickd-attempt']).to.equal('1');
    expect(third!['idempotency-key']).to.equal(executionKey('job.keys:1', EXECUTION_NS, 3));
    expect(third!['tickd-attempt']).to.equal('3');
    expect(first!['idempotency-key']).to.not.equal(third!['idempotency-key']);
  });

  it('sends the same key when the same attempt runs again', async () => {
    answer = { status: 200 };
    await run('job.again', 2);
    await run('job.again', 2);
    const [a, b] = seen.slice(-2);
    expect(a!['idempotency-key']).to.equal(b!['idempotency-key']);
  });

  it('sends a valid identifier as is, and percent-encodes the UTF-8 of anything else', () => {
    expect(headerValue('Ab.0-_:z')).to.equal('Ab.0-_:z');
    expect(headerValue('a b/é%')).to.equal('a%20b%2F%C3%A9%25');
    expect(decodeURIComponent(headerValue('a b/é%'))).to.equal('a b/é%');
  });

  it('keeps the Retry-After of a 429 or 503 in seconds', async () => {
    expect(await answering({ status: 429, headers: { 'retry-after': '7' } })).to.deep.equal({ kind: 'http_response', status: 429, retryAfterMs: 7000 });
    expect(await answering({ status: 503, headers: { 'retry-after': ' 0 ' } })).to.deep.equal({ kind: 'http_response', status: 503, retryAfterMs: 0 });
  });

  it('keeps the Retry-After of a 503 as an HTTP-date, from now; a date past is no wait', async () => {
    const at = Math.floor(Date.now() / 1000) * 1000 + 120_000;
    const outcome = await answering({ status: 503, headers: { 'retry-after': new Date(at).toUTCString() } });
    expect(outcome).to.have.keys('kind', 'status', 'retryAfterMs');
    const ms = (outcome as { retryAfterMs: number }).retryAfterMs;
    expect(ms).to.be.at.most(120_000).and.above(110_000);
    expect(await answering({ status: 429, headers: { 'retry-after': 'Thu, 01 Jan 2015 00:00:00 GMT' } })).to.deep.equal({ kind: 'http_response', status: 429, retryAfterMs: 0 });
  });

  it('keeps no Retry-After on another status, without the header, or when it is unreadable', async () => {
    expect(await answering({ status: 500, headers: { 'retry-after': '7' } })).to.deep.equal({ kind: 'http_response', status: 500 });
    expect(await answering({ status: 200, headers: { 'retry-after': '7' } })).to.deep.equal({ kind: 'http_response', status: 200 });
    expect(await answering({ status: 503 })).to.deep.equal({ kind: 'http_response', status: 503 });
    for (const unreadable of ['soon', '-1', '1.5', '99999999999', 'Thu, 01 Jan 2015 00:00:00 UTC']) {
      expect(await answering({ status: 429, headers: { 'retry-after': unreadable } }), unreadable).to.deep.equal({ kind: 'http_response', status: 429 });
    }
  });
});
