// The node:http server under the polka app. Every connection is served concurrently by the
// event loop; the timeouts below bound what a slow or silent client can hold (a half-sent
// request is dropped after HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS, idle keep-alive sockets
// after KEEP_ALIVE_TIMEOUT_MS), connection-gate.ts bounds what one connection can have in
// flight, protocol-level errors get a JSON error body like every other error
// (protocol-errors.ts), and a connection closed after an answer lingers so the answer is not
// lost to a reset (linger.ts), nor is a large body left unread read whole to keep the
// connection (unread-body.ts). close(grace): stop accepting, close idle sockets, let in-flight
// requests finish (their responses carry `Connection: close`) for `grace` ms, then destroy
// whatever is left (tickd(8) SIGNALS: 5 seconds).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Request } from 'polka';
import type { Logger } from '../log.ts';
import { createApp } from './app.ts';
import { MAX_BODY_BYTES } from './body.ts';
import { ConnectionGate } from './connection-gate.ts';
import { lingerOnDestroySoon } from './linger.ts';
import { onCheckExpectation, onClientError, onConnect, refuseBadFraming } from './protocol-errors.ts';
import type { HttpContext } from './route.ts';
import { Response } from './unread-body.ts';

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let them overrun). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** Requests of one connection handled at once; more wait, and the socket is not read meanwhile. */
const MAX_IN_FLIGHT_PER_CONNECTION = 16;
/** Response bytes of one connection waiting in its socket before reading it stops. */
const MAX_UNWRITTEN_BYTES_PER_CONNECTION = 1024 * 1024;
/** How long, and how much of what a client still sends, a closing connection reads and discards. */
const LINGER_MS = 5_000;
const LINGER_BYTES = 8 * MAX_BODY_BYTES;

/** Overridable for tests; the defaults above apply otherwise. */
export interface ServerLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly timeoutCheckIntervalMs: number;
  readonly maxInFlight: number;
  readonly maxUnwrittenBytes: number;
  readonly lingerMs: number;
  readonly lingerBytes: number;
}

const DEFAULT_LIMITS: ServerLimits = {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
  timeoutCheckIntervalMs: TIMEOUT_CHECK_INTERVAL_MS,
  maxInFlight: MAX_IN_FLIGHT_PER_CONNECTION,
  maxUnwrittenBytes: MAX_UNWRITTEN_BYTES_PER_CONNECTION,
  lingerMs: LINGER_MS,
  lingerBytes: LINGER_BYTES,
};

export interface HttpServer {
  readonly host: string;
  readonly port: number;
  close(graceMs: number): Promise<void>;
}

export async function startServer(
  ctx: HttpContext, log: Logger, host: string, port: number, overrides: Partial<ServerLimits> = {},
): Promise<HttpServer> {
  const limits = { ...DEFAULT_LIMITS, ...overrides };
  const app = createApp(ctx, log);
  const gate = new ConnectionGate(limits, (req, res) => app.handle(req as Request, res));
  const inFlight = new Set<ServerResponse>();
  let closing: Promise<void> | null = null;

  const server: Server = createServer({
    keepAlive: true,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
    // Checked in refuseBadFraming instead: Node's own 400 has an empty body.
    requireHostHeader: false,
    // Closes the connection after an answer that left a large request body unread.
    ServerResponse: Response,
  }, (req: IncomingMessage, res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    if (closing !== null) res.setHeader('Connection', 'close');
    if (refuseBadFraming(req, res)) return;
    gate.admit(req, res);
  });
  // After Node's own 'connection' listener, which the gate's 'resume' listener must follow.
  server.on('connection', (socket: Socket) => {
    lingerOnDestroySoon(socket, limits);
    gate.attach(socket);
  });
  server.on('clientError', onClientError(limits));
  server.on('connect', onConnect(limits));
  server.on('checkExpectation', onCheckExpectation);

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
