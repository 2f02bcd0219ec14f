// One connection to one address: dialling (TCP, or TLS 1.2 or later), AUTH
// (tickd-protocol(7) AUTHENTICATION), then reply lines handed out one by one. What the lines mean is the
// client's (core.ts); this file knows sockets only. The token is written to the socket and
// nowhere else.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { quoteArg } from '../domain/arguments.ts';
import { AuthError, ConnectionError, ProtocolError, type TickdError } from './errors.ts';
import type { Endpoint, Settings } from './options.ts';

const TLS_ERROR = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO|ALTNAME|EPROTO|HOSTNAME/;
const UNTRUSTED = /SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A TLS failure in one line: Node's own advice (--use-system-ca) is replaced by the CA option. */
function tlsMessage(err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  if (!TLS_ERROR.test(code)) return err.message;
  const what = err.message.split(';')[0]!;
  return UNTRUSTED.test(code) ? `TLS: ${what} (give the CA)` : `TLS: ${what}`;
}

export function authError(ep: Endpoint, line: string): AuthError {
  return line === 'ERROR auth_failed'
    ? new AuthError('auth_failed', `authentication failed: ${ep.text} does not accept this token (auth_failed)`)
    : new AuthError('auth_required', `${ep.text} requires authentication: give a token (auth_required)`);
}

export interface LineSink {
  line(line: string): void;
  /** The connection ended; `err` says why when it was not closed on purpose. */
  closed(err: TickdError | null): void;
}

/** An open connection: lines in, text out. */
export class Connection {
  readonly endpoint: Endpoint;
  readonly socket: Socket;
  private buf = '';
  private sink: LineSink | null = null;
  private lastError: string | null = null;
  private ended = false;
  private linesSeen = 0;

  constructor(socket: Socket, endpoint: Endpoint) {
    this.socket = socket;
    this.endpoint = endpoint;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => { this.lastError = err.code ?? err.message; });
    socket.on('close', () => {
      if (this.ended) return;
      this.ended = true;
      const why = this.lastError === null ? '' : `: ${this.lastError}`;
      // A plaintext connection closed before any reply is what a TLS listener does to it.
      const hint = this.linesSeen === 0 && !(socket as Partial<TLSSocket>).encrypted ? ' (before any reply: a TLS listener?)' : '';
      this.sink?.closed(new ConnectionError(`connection to ${endpoint.text} closed${why}${hint}`));
    });
  }

  attach(sink: LineSink): void {
    this.sink = sink;
  }

  write(text: string): void {
    this.socket.write(text);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Ends it on purpose: what is written is flushed first when `graceful`. */
  close(graceful: boolean): void {
    if (this.ended) return;
    this.ended = true;
    if (graceful) this.socket.end();
    else this.socket.destroy();
    this.sink?.closed(null);
  }

  /** Ends it for `err` (a reply that is not the protocol). */
  fail(err: TickdError): void {
    if (this.ended) return;
    this.ended = true;
    this.socket.destroy();
    this.sink?.closed(err);
  }

  private onData(chunk: string): void {
    const buf = this.buf === '' ? chunk : this.buf + chunk;
    let start = 0;
    const sink = this.sink;
    for (let nl = buf.indexOf('\n'); nl !== -1 && !this.ended; nl = buf.indexOf('\n', start)) {
      const line = buf.slice(start, nl);
      start = nl + 1;
      this.linesSeen++;
      sink?.line(line);
    }
    this.buf = start === 0 ? buf : buf.slice(start);
  }
}

function dial(ep: Endpoint, s: Settings): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const tls = s.tls;
    const socket: Socket = tls === null
      ? netConnect({ host: ep.host, port: ep.port })
      : tlsConnect({ minVersion: 'TLSv1.2', ...(isIP(ep.host) === 0 ? { servername: ep.host } : {}), ...tls, host: ep.host, port: ep.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no connection within ${seconds(s.connectTimeoutMs)}`));
    }, s.connectTimeoutMs);
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

/** AUTH on a fresh connection: resolves on OK; an AuthError for a refusal. */
function authenticate(c: Connection, token: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => c.fail(new ConnectionError(`no answer to AUTH from ${c.endpoint.text} within ${seconds(timeoutMs)}`)), timeoutMs);
    c.attach({
      line: (l) => {
        clearTimeout(timer);
        if (l === 'OK') resolve();
        else c.fail(l.startsWith('ERROR auth_') ? authError(c.endpoint, l) : new ProtocolError(`unexpected answer to AUTH from ${c.endpoint.text}: ${JSON.stringify(l.slice(0, 80))}`));
      },
      closed: (err) => {
        clearTimeout(timer);
        reject(err ?? new ConnectionError(`connection to ${c.endpoint.text} closed during AUTH`));
      },
    });
    c.write(`AUTH ${quoteArg(token)}\n`);
  });
}

/**
 * The first address that accepts (and, with a token, authenticates there). An address that
 * cannot be reached moves on to the next; an AUTH refusal does not (every node of a cluster
 * holds the same tokens), and `onConnect` hears of each accepted connection.
 */
export async function openConnection(s: Settings, onConnect: (ep: Endpoint) => void): Promise<Connection> {
  const failures: string[] = [];
  for (const ep of s.endpoints) {
    let socket: Socket;
    try {
      socket = await dial(ep, s);
    } catch (err) {
      failures.push(`${ep.text}: ${(err as Error).message}`);
      continue;
    }
    const c = new Connection(socket, ep);
    onConnect(ep);
    try {
      if (s.token !== null) await authenticate(c, s.token, s.connectTimeoutMs);
    } catch (err) {
      // A refusal ends the search; with one address, the conversation's own error says most.
      if (err instanceof AuthError || s.endpoints.length === 1) throw err;
      failures.push(`${ep.text}: ${(err as Error).message}`);
      continue;
    }
    return c;
  }
  throw new ConnectionError(failures.length === 1 ? `cannot connect to ${failures[0]}` : `cannot connect to any address: ${failures.join('; ')}`);
}
