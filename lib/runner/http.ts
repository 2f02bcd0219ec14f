// The http runner (tickd-protocol(7) RUNNERS), on node:http and node:https with
// keep-alive agents.
//
// Why not got (the design card's choice): measured in the runner child, where the primary's
// garbage no longer matters, got still costs about twice the CPU per request (10 000 POSTs:
// 2.7-3.0 s against 1.5-1.6 s) and the fire-http row fell from 5 500-8 000 to 1 400-2 400
// jobs/s with it. The few things got did for us here (phase timeouts, no redirects,
// keep-alive) are written out below.
//
// Invariants:
// - GET and DELETE send no body. POST and PUT send exactly
//   {"job_id":"<id>","execution":<ns>} with content-type application/json: the id escaped by
//   JSON.stringify, the nanoseconds written from the bigint (never through a float).
// - A 2xx status is success; anything else (3xx included: redirects are never followed) is
//   failure. No retries. TLS for https:// with the default certificate verification.
// - The outcome (lib/domain/attempt.ts) is the response's status, or the network error that
//   stood in its way (timeouts included), its text scrubbed of the URL's password. Failures
//   are logged at debug only: the engine logs the one warning of a failed job.
// - Timeouts ("30 s connect and 30 s read", each ctx.timeoutMs): connect = DNS + TCP + TLS
//   handshake of a new socket; read = the socket idle for that long while the request is sent
//   or the answer awaited, or no response headers within connect + read in all. A server that
//   accepts and never answers, or trickles, frees the slot.
// - Every request carries Idempotency-Key (the execution key), Tickd-Job and Tickd-Attempt
//   (doc/execution.md "Keys to deduplicate on"). A job identifier is ASCII letters, digits and
//   `. - _ :` (lib/domain/identifier.ts), all valid in a header value, so it is sent as is;
//   any other byte (no valid identifier holds one) would be sent as %XX of its UTF-8.
// - A 429 or 503 keeps its Retry-After (seconds or an HTTP-date) in the outcome, in ms.
// - The outcome is decided at the response headers; the body is drained (bounded by the read
//   timeout and MAX_DRAIN_BYTES) only so keep-alive sockets can be reused, and never buffered.
import { parseOccurrenceId } from '../schedule/occurrence.ts';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { clipHead, type AttemptOutcome } from '../domain/attempt.ts';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import { httpUrlError } from '../domain/runner-validate.ts';
import { retryAfterNs } from '../domain/retry-policy.ts';
import { ABORTED, runnerError, type Execution, type RunnerContext } from './execution.ts';
import { executionKeys } from './execution-key.ts';
import { redactUrl, scrubSecrets } from './redact.ts';
import { preconnected, preconnecting } from './http-preconnect.ts';
import { errorText } from '../errors.ts';

type HttpSpec = Extract<RunnerSpec, { type: 'http' }>;

/** Beyond this much response body the socket is dropped instead of drained for reuse. */
const MAX_DRAIN_BYTES = 1 << 20;
/** Idle keep-alive sockets are closed before the common 5 s server timeout can race a reuse. */
const IDLE_SOCKET_MS = 4000;

/**
 * Times out the agent's FREE sockets only. The agent's own `timeout` option would also apply
 * to a socket still connecting, and cut the 30 s connect timeout down to IDLE_SOCKET_MS.
 */
function closingIdleSockets<A extends HttpAgent>(agent: A): A {
  // Node returns whether the socket is kept (its typings say void) and hands a net.Socket.
  const a = agent as unknown as { keepSocketAlive(socket: Socket): boolean };
  const keep = a.keepSocketAlive.bind(a);
  a.keepSocketAlive = (socket) => {
    const kept = keep(socket);
    if (kept) socket.setTimeout(IDLE_SOCKET_MS);
    return kept;
  };
  return agent;
}

const agents = {
  http: preconnecting(closingIdleSockets(new HttpAgent({ keepAlive: true }))),
  https: preconnecting(closingIdleSockets(new HttpsAgent({ keepAlive: true }))),
};

export function httpBody(exec: Execution): string {
  return `{"job_id":${JSON.stringify(exec.jobId)},"execution":${exec.execution.toString()}}`;
}

/** A rule's URL, checked, parsed and redacted once: every execution of the rule reuses it. */
interface Target {
  /** The redacted form: URLs may carry userinfo, logs only ever see this. */
  readonly where: string;
  /** Why the URL is refused (the check `RULE SET` stores with), or null. */
  readonly error: string | null;
  readonly url: URL | null;
}

const targets = new WeakMap<HttpSpec, Target>();

function targetOf(spec: HttpSpec): Target {
  let target = targets.get(spec);
  if (target === undefined) {
    const error = httpUrlError(spec.url);
    target = { where: redactUrl(spec.url), error, url: error === null ? new URL(spec.url) : null };
    targets.set(spec, target);
  }
  return target;
}

/**
 * Has a connection to the rule's origin ready for its next job, due soon (the primary's
 * lookahead, lib/engine/lookahead.ts), unless the agent holds an idle one. A spare
 * nobody takes is closed after IDLE_SOCKET_MS, as an idle keep-alive socket is.
 */
export function prepareHttp(spec: HttpSpec, ctx: RunnerContext): void {
  const { url } = targetOf(spec);
  if (url === null) return;
  (url.protocol === 'https:' ? agents.https : agents.http).preconnect(url, ctx.timeoutMs, IDLE_SOCKET_MS);
}

export function runHttp(exec: Execution, spec: HttpSpec, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  const log = ctx.log;
  const { where, error, url } = targetOf(spec);
  if (url === null) {
    // Only an old logfile can hold such a rule: the job fails.
    log.debug({ url: where }, `http runner: ${error}`);
    return Promise.resolve(runnerError(String(error)));
  }
  if (signal.aborted) return Promise.resolve(ABORTED);
  const body = spec.method === 'POST' || spec.method === 'PUT' ? httpBody(exec) : null;
  const t = ctx.timeoutMs;
  const networkError = (err: unknown): AttemptOutcome =>
    ({ kind: 'network_error', error: clipHead(scrubSecrets(errorText(err), [url.password])) });

  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    let req: ClientRequest;
    const settle = (outcome: AttemptOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(outcome);
    };
    const fail = (why: string): void => { req.destroy(new Error(why)); };
    // Connect + read in all, until the response headers.
    const deadline = setTimeout(() => fail(`no response within ${2 * t} ms`), 2 * t);
    try {
      const { key, attemptNo } = executionKeys(exec);
      const headers: Record<string, string | number> = {
        'user-agent': 'tickd',
        'idempotency-key': key,
        'tickd-job': headerValue(exec.jobId),
        'tickd-attempt': attemptNo,
      };
      const occurrence = parseOccurrenceId(exec.jobId);
      if (occurrence !== null) {
        headers['tickd-schedule'] = occurrence.schedule;
        headers['tickd-nominal-time'] = occurrence.nominal.toString();
      }
      if (body !== null) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const https = url.protocol === 'https:';
      req = (https ? httpsRequest : httpRequest)(url, { method: spec.method, headers, agent: https ? agents.https : agents.http, signal });
    } catch (err) {
      log.debug({ url: where, err: errorText(err) }, 'http runner could not build the request');
      settle(networkError(err));
      return;
    }
    req.on('socket', (socket: Socket) => watchConnect(req, socket, t, fail));
    req.setTimeout(t, () => fail(`read timeout: the socket was idle for ${t} ms`));
    req.on('error', (err: unknown) => {
      if (signal.aborted) return settle(ABORTED);
      if (!settled) log.debug({ url: where, method: spec.method, err: errorText(err) }, 'http runner failed');
      settle(networkError(err));
    });
    req.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      const ok = status >= 200 && status <= 299;
      log.debug({ url: where, method: spec.method, status }, ok ? 'http runner done' : 'http runner got a non-2xx status');
      settle(httpResponse(status, response));
      drain(response, ok, t);
    });
    req.end(body ?? undefined);
  });
}

/**
 * The job identifier as a header value: as is, since every valid identifier is; any other
 * byte of its UTF-8 (an impossible identifier) as %XX, so the value always decodes back.
 */
export function headerValue(id: string): string {
  if (/^[A-Za-z0-9._:-]*$/.test(id)) return id;
  return Buffer.from(id, 'utf8').toString('latin1').replace(/[^A-Za-z0-9._:-]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** The response's outcome; a 429 or 503 with a readable Retry-After keeps its wait. */
function httpResponse(status: number, response: IncomingMessage): AttemptOutcome {
  if (status !== 429 && status !== 503) return { kind: 'http_response', status };
  const wait = retryAfterNs(response.headers['retry-after'], Date.now());
  return wait === null ? { kind: 'http_response', status } : { kind: 'http_response', status, retryAfterMs: Number(wait / 1_000_000n) };
}

/** Bounds DNS + TCP + TLS of a new socket by `t`; a reused or preconnected socket is connected. */
function watchConnect(req: ClientRequest, socket: Socket, t: number, fail: (why: string) => void): void {
  if (req.reusedSocket || preconnected(socket)) return;
  const tls = 'encrypted' in socket;
  if (!tls && !socket.connecting) return;
  const timer = setTimeout(() => fail(`connect timeout: not connected within ${t} ms`), t);
  const done = (): void => clearTimeout(timer);
  socket.once(tls ? 'secureConnect' : 'connect', done);
  socket.once('close', done);
}

function drain(response: IncomingMessage, reuse: boolean, t: number): void {
  if (!reuse) {
    response.destroy();
    return;
  }
  let seen = 0;
  const timer = setTimeout(() => response.destroy(), t);
  response.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > MAX_DRAIN_BYTES) response.destroy();
  });
  response.on('close', () => clearTimeout(timer));
  response.on('error', () => {}); // a dropped body changes nothing: the outcome is decided
}
