// Answers given before the request body was read (a 405, 401, 404 or 413 that never looks at
// the body). Node keeps such a connection by reading and discarding the rest of the body
// after the answer, however large it is. Here that is done only for a small declared body; a
// larger or chunked one makes the answer carry `Connection: close` instead, and the connection
// then closes through linger.ts, which bounds what is still read and keeps the answer from
// being lost to a reset. Deciding before the headers go out matters: a client told
// `keep-alive` would reuse a connection we are about to close.
import { ServerResponse, type IncomingMessage } from 'node:http';

/** A body up to this size left unread is read and discarded to keep the connection. */
export const DISCARD_BODY_BYTES = 64 * 1024;

/** Whether `req` has body bytes still to come, more of them (or an unknown number) than are worth reading. */
function unreadBodyTooLarge(req: IncomingMessage): boolean {
  if (req.complete) return false;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  // NaN (never past llhttp) counts as too large.
  const declared = Number(req.headers['content-length'] ?? 0);
  return !(declared <= DISCARD_BODY_BYTES);
}

/** The server's ServerResponse class (createServer's documented `ServerResponse` option). */
export class Response extends ServerResponse {
  override writeHead(statusCode: number, ...rest: unknown[]): this {
    if (!this.headersSent && unreadBodyTooLarge(this.req)) this.setHeader('Connection', 'close');
    // The base overloads cannot be named from a rest parameter; the arguments pass unchanged.
    return (ServerResponse.prototype.writeHead as (this: ServerResponse, ...args: unknown[]) => this).call(this, statusCode, ...rest);
  }
}
