// One conversation with a daemon over TCP or TLS: connecting to the first address of the list
// that answers (tickd-ctl(1) OPTIONS), AUTH, and matching reply lines to requests
// (tickd-protocol(7) RESPONSES and AUTHENTICATION).
//
// Theory:
// - The daemon answers a connection's requests in the order it sent them, so pending requests
//   are a FIFO: every reply line belongs to the request at its head, and must start with that
//   request's id (a check: anything else is not the protocol, exit 3). A request's handler
//   says which of its lines is the last (lists end with `<rid> OK`).
// - Replies before authentication carry no request id: `OK`, `ERROR auth_required`,
//   `ERROR auth_failed`. Our ids are never `OK` or `ERROR`, so these are recognised anywhere;
//   the two errors end the conversation (the daemon closes the connection after them).
// - Requests may be pipelined: writing never waits for answers. The caller bounds what is in
//   flight (settledTo) and honours the socket's backpressure (write() returning false, then
//   drained()).
// - The timeout covers connecting (TCP and the TLS handshake) and then every wait for an
//   answer: while anything is in flight, no byte for `timeoutMs` ends the conversation. An idle
//   connection (the prompt, watch between polls) never times out.
// - The token is written to the socket and nowhere else.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { quoteArg } from '../domain/arguments.ts';
import { Fifo } from '../domain/fifo.ts';
import { ConnectionError, CtlError } from './errors.ts';
import type { ConnectSettings, Endpoint } from './settings.ts';

export interface ReplyHandler {
  /** One line of the answer, request id removed; returns true when it is the last. */
  line(rest: string, rid: string): boolean;
  /** The conversation ended before the last line. */
  fail(err: CtlError): void;
}

interface Pending {
  readonly rid: string;
  readonly handler: ReplyHandler;
}

const AUTH_REQUIRED = 'ERROR auth_required';
const AUTH_FAILED = 'ERROR auth_failed';
const TLS_ERROR = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO|ALTNAME|EPROTO|HOSTNAME/;
const UNTRUSTED = /SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function authError(ep: Endpoint, line: string): ConnectionError {
  return line === AUTH_FAILED
    ? new ConnectionError(`authentication failed: ${ep.text} does not accept this token (auth_failed)`)
    : new ConnectionError(`${ep.text} requires authentication: give a token with --token-file or TICKD_TOKEN (auth_required)`);
}

/** A reply line inside a message: short and on one line. */
function shown(line: string): string {
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}...` : line);
}

export class Client {
  readonly endpoint: Endpoint;
  private readonly socket: Socket;
  private readonly timeoutMs: number;
  private buf = '';
  private readonly queue = new Fifo<Pending>();
  private failure: CtlError | null = null;
  private lastSocketError: string | null = null;
  private linesSeen = 0;
  private readonly tls: boolean;
  private nextRid = 1;
  private paused = false;
  private waiter: { readonly max: number; readonly resolve: () => void; readonly reject: (e: CtlError) => void } | null = null;

  constructor(socket: Socket, endpoint: Endpoint, timeoutMs: number, tls: boolean) {
    this.socket = socket;
    this.endpoint = endpoint;
    this.timeoutMs = timeoutMs;
    this.tls = tls;
    socket.setNoDelay(true);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => { this.lastSocketError = err.code ?? err.message; });
    socket.on('timeout', () => {
      if (this.inflight > 0) this.fail(new ConnectionError(`no answer from ${endpoint.text} within ${seconds(timeoutMs)}`));
    });
    socket.on('close', () => {
      const hint = !this.tls && this.linesSeen === 0 ? ' (a TLS listener? try --tls)' : '';
      const why = this.lastSocketError === null ? '' : `: ${this.lastSocketError}`;
      this.fail(new ConnectionError(`connection to ${endpoint.text} closed before the answer${why}${hint}`));
    });
  }

  /** Requests sent and not fully answered. */
  get inflight(): number {
    return this.queue.length;
  }

  /** Why the conversation is over, or null while it goes on. */
  get failed(): CtlError | null {
    return this.failure;
  }

  /** A fresh request id (`c1`, `c2`, ...): never `OK` or `ERROR`. */
  rid(): string {
    return `c${this.nextRid++}`;
  }

  /** Expects the answer to a request with this id (sent by write(), now or later). */
  expect(rid: string, handler: ReplyHandler): void {
    if (this.failure !== null) {
      handler.fail(this.failure);
      return;
    }
    this.queue.push({ rid, handler });
    if (this.inflight === 1 && !this.paused) this.socket.setTimeout(this.timeoutMs);
  }

  /** Writes protocol text; false when the socket wants a drained() before more. */
  write(text: string): boolean {
    if (this.failure !== null) return true;
    return this.socket.write(text);
  }

  /** Sends `<rid> <text>` and expects its answer. */
  request(text: string, handler: ReplyHandler): void {
    const rid = this.rid();
    this.expect(rid, handler);
    this.write(`${rid} ${text}\n`);
  }

  /** Resolves once the socket has taken what was written (or the conversation is over). */
  drained(): Promise<void> {
    if (this.failure !== null || !this.socket.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => { this.socket.off('drain', done); this.socket.off('close', done); resolve(); };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  /** Resolves once at most `max` requests are in flight; rejects when the conversation ends. */
  settledTo(max: number): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.inflight <= max) return Promise.resolve();
    return new Promise((resolve, reject) => { this.waiter = { max, resolve, reject }; });
  }

  /** Stops reading replies (the output is backed up); the timeout is off meanwhile. */
  pauseReading(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
    this.socket.setTimeout(0);
  }

  resumeReading(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.inflight > 0) this.socket.setTimeout(this.timeoutMs);
    this.socket.resume();
  }

  /** Ends the conversation; requests still pending fail (their promises settle). */
  close(): void {
    this.fail(new ConnectionError(`connection to ${this.endpoint.text} closed`));
  }

  private onData(chunk: string): void {
    const buf = this.buf === '' ? chunk : this.buf + chunk;
    let start = 0;
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n', start)) {
      const line = buf.slice(start, nl);
      start = nl + 1;
      this.dispatch(line);
      if (this.failure !== null) return;
    }
    this.buf = start === 0 ? buf : buf.slice(start);
  }

  private dispatch(line: string): void {
    this.linesSeen++;
    const p = this.queue.peek();
    let done: boolean;
    if (p !== undefined && p.rid === '') {
      done = p.handler.line(line, '');
    } else if (line === AUTH_REQUIRED || line === AUTH_FAILED) {
      this.fail(authError(this.endpoint, line));
      return;
    } else if (p !== undefined && line.length > p.rid.length && line.charCodeAt(p.rid.length) === 32 && line.startsWith(p.rid)) {
      done = p.handler.line(line.slice(p.rid.length + 1), p.rid);
    } else {
      const expected = p === undefined ? 'no request pending' : `expected request ${p.rid}`;
      this.fail(new ConnectionError(`unexpected reply from ${this.endpoint.text} (${expected}): ${shown(line)}`));
      return;
    }
    if (done) this.advance();
  }

  private advance(): void {
    this.queue.shift();
    if (this.queue.length === 0) this.socket.setTimeout(0);
    const w = this.waiter;
    if (w !== null && this.inflight <= w.max) {
      this.waiter = null;
      w.resolve();
    }
  }

  private fail(err: CtlError): void {
    if (this.failure !== null) return;
    this.failure = err;
    this.socket.destroy();
    for (const p of this.queue.drain()) p.handler.fail(err);
    const w = this.waiter;
    this.waiter = null;
    w?.reject(err);
  }

  /** AUTH: resolves on `OK`, rejects with the one-line reason otherwise. */
  authenticate(secret: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.expect('', {
        line: (l) => {
          if (l === 'OK') resolve();
          else {
            const err = l === AUTH_FAILED || l === AUTH_REQUIRED ? authError(this.endpoint, l) : new ConnectionError(`unexpected answer to AUTH from ${this.endpoint.text}: ${shown(l)}`);
            this.fail(err);
            reject(err);
          }
          return true;
        },
        fail: reject,
      });
      this.write(`AUTH ${quoteArg(secret)}\n`);
    });
  }
}

/** A TLS failure in one line: Node's own advice (--use-system-ca) is replaced by ours. */
function tlsMessage(err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  if (!TLS_ERROR.test(code)) return err.message;
  const what = err.message.split(';')[0]!;
  return UNTRUSTED.test(code) ? `TLS: ${what} (give the CA with --cacert)` : `TLS: ${what}`;
}

function dial(ep: Endpoint, s: ConnectSettings): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const tls = s.tls;
    const socket: Socket = tls === null
      ? netConnect({ host: ep.host, port: ep.port })
      : tlsConnect({
        host: ep.host,
        port: ep.port,
        minVersion: 'TLSv1.2',
        rejectUnauthorized: !tls.insecure,
        ...(tls.ca === null ? {} : { ca: tls.ca }),
        ...(tls.servername !== null ? { servername: tls.servername } : isIP(ep.host) === 0 ? { servername: ep.host } : {}),
      });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no connection within ${seconds(s.timeoutMs)}`));
    }, s.timeoutMs);
    const onError = (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(tls === null ? err.message : tlsMessage(err)));
    };
    socket.once('error', onError);
    socket.once(tls === null ? 'connect' : 'secureConnect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/**
 * Connects to the first address that accepts (and, with a token, authenticates there).
 * Failing to connect moves on to the next address; an AUTH refusal does not (every node of a
 * cluster has the same tokens).
 */
export async function openClient(s: ConnectSettings): Promise<Client> {
  const failures: string[] = [];
  for (const ep of s.endpoints) {
    let socket: Socket;
    try {
      socket = await dial(ep, s);
    } catch (err) {
      failures.push(`${ep.text}: ${(err as Error).message}`);
      continue;
    }
    const client = new Client(socket, ep, s.timeoutMs, s.tls !== null);
    if (s.token !== null) await client.authenticate(s.token);
    return client;
  }
  throw new ConnectionError(failures.length === 1 ? `cannot connect to ${failures[0]}` : `cannot connect to any address: ${failures.join('; ')}`);
}
