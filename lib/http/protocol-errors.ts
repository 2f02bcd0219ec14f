// Answers for requests the routes never see, so that every HTTP error is JSON {"error": string}
// like the routes' (tickd-protocol(7) HTTP INTERFACE), including where Node would write an
// empty body or nothing at all:
// - bytes Node cannot parse, oversized headers, timeouts ('clientError'): 400 / 431 / 408;
// - an HTTP/1.1 request without Host (Node's requireHostHeader, turned off: its 400 is empty);
// - a Transfer-Encoding whose last coding is not chunked: llhttp emits such a request and only
//   then fails it, so a route answered first (or, for /ui/ and /docs/ whose files are streamed,
//   the 'clientError' came while the answer was half written and the socket was destroyed:
//   no answer at all). It is refused here, before any route runs;
// - an Expect other than 100-continue ('checkExpectation'; Node's own 417 is empty): 417;
// - CONNECT ('connect'; Node destroys the socket without a word): 405.
// Each of these closes the connection, through linger.ts so the answer is not lost to a reset.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { sendError } from './json.ts';
import { isLingering, lingerClose, type LingerLimits } from './linger.ts';

const CLOSE = { Connection: 'close' };

/** A complete JSON error response as raw bytes, for a socket without a ServerResponse. */
function rawError(status: number, message: string, headers: Readonly<Record<string, string>> = {}): string {
  const body = JSON.stringify({ error: message });
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${extra}Content-Type: application/json; charset=utf-8\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

function clientErrorStatus(code: string | undefined): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW': return 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT': return 408;
    default: return 400;
  }
}

/** The server's 'clientError' listener: Node could not parse what the client sent. */
export function onClientError(limits: LingerLimits): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, duplex) => {
    const socket = duplex as Socket & { _httpMessage?: ServerResponse | null };
    // Already answered and closing: the parser only saw the end of what we are discarding.
    if (isLingering(socket)) return;
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const pending = socket._httpMessage;
    if (pending != null && pending.headersSent) {
      // A complete answer (such as the 400 for a bad Transfer-Encoding) still goes out whole;
      // one cut short cannot be followed by another.
      if (pending.writableEnded) lingerClose(socket, limits);
      else socket.destroy();
      return;
    }
    const status = clientErrorStatus(err.code);
    socket.write(rawError(status, STATUS_CODES[status]!.toLowerCase()));
    lingerClose(socket, limits);
  };
}

/** The server's 'connect' listener: this is no proxy. */
export function onConnect(limits: LingerLimits): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    if (!socket.writable) return void socket.destroy();
    // An empty Allow: the authority-form target is no resource of ours (RFC 9110 §10.2.1).
    socket.write(rawError(405, `method ${req.method ?? 'CONNECT'} not allowed`, { Allow: '' }));
    lingerClose(socket as Socket, limits);
  };
}

/** The server's 'checkExpectation' listener (any Expect but 100-continue). */
export function onCheckExpectation(_req: IncomingMessage, res: ServerResponse): void {
  sendError(res, 417, 'Expect must be 100-continue', CLOSE);
}

/** The last transfer coding is chunked (codings are listed in order, comma-separated). */
function endsChunked(te: string): boolean {
  return te.slice(te.lastIndexOf(',') + 1).trim().toLowerCase() === 'chunked';
}

/**
 * Answers a request whose framing is unusable and returns true; returns false for any other.
 * Must run as soon as the request is emitted: llhttp fails a bad Transfer-Encoding right after.
 */
export function refuseBadFraming(req: IncomingMessage, res: ServerResponse): boolean {
  // Node's own check (requireHostHeader) covers HTTP/1.1 only; so does this one.
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    sendError(res, 400, 'Host header is required', CLOSE);
    return true;
  }
  const te = req.headers['transfer-encoding'];
  if (te !== undefined && !endsChunked(te)) {
    sendError(res, 400, 'Transfer-Encoding must end with chunked', CLOSE);
    return true;
  }
  return false;
}
