// The node:http server under the polka app. Every connection is served concurrently by the
// event loop; the timeouts below bound what a slow or silent client can hold (a half-sent
// request is dropped after HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS, idle keep-alive sockets
// after KEEP_ALIVE_TIMEOUT_MS), and connection-level protocol errors get a JSON error body
// like every other error. close(grace): stop accepting, close idle sockets, let in-flight
// requests finish (their responses carry `Connection: close`) for `grace` ms, then destroy
// whatever is left (interface.md, Limits: 5 seconds).
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Request } from 'polka';
import type { Logger } from '../log.ts';
import { createApp } from './app.ts';
import type { HttpContext } from './route.ts';

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let them overrun). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** Overridable for tests; the defaults above apply otherwise. */
export interface ServerLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly timeoutCheckIntervalMs: number;
}

const DEFAULT_LIMITS: ServerLimits = {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
  timeoutCheckIntervalMs: TIMEOUT_CHECK_INTERVAL_MS,
};

export interface HttpServer {
  readonly host: string;
  readonly port: number;
  close(graceMs: number): Promise<void>;
}

function clientErrorStatus(code: string | undefined): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW': return 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT': return 408;
    default: return 400;
  }
}

/** Answers a request Node could not parse (bad syntax, oversized headers, timeout) with JSON. */
function onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || (pending != null && pending.headersSent)) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus(err.code);
  const body = JSON.stringify({ error: STATUS_CODES[status]!.toLowerCase() });
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

export async function startServer(
  ctx: HttpContext, log: Logger, host: string, port: number, overrides: Partial<ServerLimits> = {},
): Promise<HttpServer> {
  const limits = { ...DEFAULT_LIMITS, ...overrides };
  const app = createApp(ctx, log);
  const inFlight = new Set<ServerResponse>();
  let closing: Promise<void> | null = null;

  const server: Server = createServer({
    keepAlive: true,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
  }, (req: IncomingMessage, res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    if (closing !== null) res.setHeader('Connection', 'close');
    app.handle(req as Request, res);
  });
  server.on('clientError', onClientError);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // After listening, an error (e.g. EMFILE on accept) must be logged, not crash the worker.
  server.on('error', (err) => log.error({ err }, 'HTTP server error'));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('HTTP server has no TCP address');

  const close = (graceMs: number): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
  return { host: address.address, port: address.port, close };
}
