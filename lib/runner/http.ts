// The http runner (interface.md, Runner; decisions §5), on one shared got instance.
//
// Invariants:
// - GET and DELETE send no body. POST and PUT send exactly
//   {"job_id":"<id>","execution":<ns>} with content-type application/json: the id escaped by
//   JSON.stringify, the nanoseconds written from the bigint (never through a float).
// - A 2xx status is success; anything else (3xx included: redirects are never followed) is
//   failure. No retries. TLS for https:// with the default certificate verification.
// - Timeouts ("connection and read timeouts are 30 seconds"), each ctx.timeoutMs, in got terms:
//   connection = `lookup` (DNS), `connect` (TCP handshake), `secureConnect` (TLS handshake);
//   read = `send` (until the request is written), `response` (request written -> response
//   headers: the server's answer) and `read` (headers -> end of body). Every phase is bounded,
//   so a server that accepts and never answers, or trickles, frees the slot.
// - The outcome is decided at the response headers; the body is drained (bounded by the read
//   timeout and MAX_DRAIN_BYTES) only so keep-alive sockets can be reused, and never buffered.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import got, { type Method } from 'got';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import { httpUrlError } from '../domain/runner-validate.ts';
import { errorText, type Execution, type RunnerContext } from './execution.ts';
import { redactUrl } from './redact.ts';

type HttpSpec = Extract<RunnerSpec, { type: 'http' }>;

/** Beyond this much response body the socket is dropped instead of drained for reuse. */
const MAX_DRAIN_BYTES = 1 << 20;

const client = got.extend({
  retry: { limit: 0 },
  followRedirect: false,
  throwHttpErrors: false,
  decompress: false,
  cache: false,
  agent: { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) },
  headers: { 'user-agent': 'tickd' },
});

export function httpBody(exec: Execution): string {
  return `{"job_id":${JSON.stringify(exec.jobId)},"execution":${exec.execution.toString()}}`;
}

export function runHttp(exec: Execution, spec: HttpSpec, ctx: RunnerContext, signal: AbortSignal): Promise<boolean> {
  const log = ctx.log;
  // URLs may carry userinfo too; logs only ever see the redacted form.
  const where = redactUrl(spec.url);
  // The check `RULE SET` stores with: anything else (an old logfile) fails the job.
  const urlError = httpUrlError(spec.url);
  if (urlError !== null) {
    log.warn({ url: where }, `http runner: ${urlError}`);
    return Promise.resolve(false);
  }
  if (signal.aborted) return Promise.resolve(false);
  const withBody = spec.method === 'POST' || spec.method === 'PUT';
  const t = ctx.timeoutMs;

  return new Promise<boolean>((resolve) => {
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      resolve(ok);
    };
    let stream: ReturnType<typeof client.stream>;
    try {
      stream = client.stream(spec.url, {
        method: spec.method satisfies Method,
        ...(withBody ? { body: httpBody(exec), headers: { 'content-type': 'application/json' } } : {}),
        timeout: { lookup: t, connect: t, secureConnect: t, send: t, response: t, read: t },
        signal,
      });
    } catch (err) {
      log.warn({ url: where, err: errorText(err) }, 'http runner could not build the request');
      settle(false);
      return;
    }

    stream.on('error', (err: unknown) => {
      if (!settled && !signal.aborted) log.warn({ url: where, method: spec.method, err: errorText(err) }, 'http runner failed');
      settle(false);
    });
    stream.on('response', (response: { statusCode: number }) => {
      const ok = response.statusCode >= 200 && response.statusCode <= 299;
      if (ok) log.debug({ url: where, method: spec.method, status: response.statusCode }, 'http runner done');
      else log.warn({ url: where, method: spec.method, status: response.statusCode }, 'http runner got a non-2xx status');
      settle(ok);
      drain(stream, ok);
    });
    // got ends body-less GET requests itself but leaves DELETE open for a piped body.
    if (spec.method === 'DELETE') stream.end();
  });
}

function drain(stream: ReturnType<typeof client.stream>, reuse: boolean): void {
  if (!reuse) {
    stream.destroy();
    return;
  }
  let seen = 0;
  stream.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > MAX_DRAIN_BYTES) stream.destroy();
  });
}
