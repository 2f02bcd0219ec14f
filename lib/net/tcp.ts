// The TCP (or TLS) listener of a connection worker: one Session per socket (the session does
// the flow control), the unauthenticated-connection deadline, and the live connection count.
// The protocol itself is in lib/protocol; this file only moves bytes.
import { createServer, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import type { Command, Reply } from '../domain/command.ts';
import type { TokenTable } from '../auth/verify.ts';
import { Session, type RequestInfo } from '../protocol/session.ts';
import type { Logger } from '../log.ts';

/**
 * Unauthenticated time, counted from accept (TLS handshake included):
 * tickd-protocol(7) AUTHENTICATION.
 */
export const AUTH_DEADLINE_MS = 5000;
/** How long a half-closed client may wait for its outstanding replies. */
const HALF_CLOSE_GRACE_MS = 30_000;

export interface TcpOptions {
  readonly tls: { readonly cert: string; readonly key: string } | null;
  readonly tokens: TokenTable | null;
  readonly dispatch: (cmd: Command, cb: (reply: Reply) => void) => void;
  readonly log: Logger;
  readonly onConnectionCount: (count: number) => void;
  readonly onRequest?: (info: RequestInfo) => void;
}

export class TcpListener {
  readonly server: Server;
  private readonly opts: TcpOptions;
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Map<Socket, Session>();
  private readonly secureContext: SecureContext | null;

  constructor(opts: TcpOptions) {
    this.opts = opts;
    this.secureContext = opts.tls === null ? null : createSecureContext({ cert: opts.tls.cert, key: opts.tls.key, minVersion: 'TLSv1.2' });
    // TLS is layered by hand on accepted sockets (rather than tls.createServer) so that the
    // 5-second deadline runs from accept and covers the handshake
    // (tickd-protocol(7) AUTHENTICATION).
    // allowHalfOpen: a client that sends its commands and then shuts down its sending side
    // (`printf ... | nc`) still gets every reply; we end the connection once they are written.
    this.server = createServer({ noDelay: true, allowHalfOpen: true }, (raw) => this.accept(raw));
    this.server.on('error', (err) => opts.log.error({ err }, 'TCP listener error'));
  }

  listen(host: string, port: number): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once('error', onError);
      this.server.listen({ host, port }, () => {
        this.server.off('error', onError);
        const addr = this.server.address();
        if (addr === null || typeof addr === 'string') return reject(new Error('no address'));
        resolve({ host: addr.address, port: addr.port });
      });
    });
  }

  /** Stops accepting; lets every connection finish what it has received, then closes it. */
  async drain(graceMs: number): Promise<void> {
    this.server.close();
    const waits = [...this.sessions].map(([socket, session]) => this.finish(socket, session, graceMs));
    await Promise.all(waits);
  }

  private finish(socket: Socket, session: Session, graceMs: number): Promise<void> {
    session.endInput();
    return new Promise((resolve) => {
      const deadline = setTimeout(() => { socket.destroy(); resolve(); }, graceMs);
      session.whenAnswered(() => {
        clearTimeout(deadline);
        socket.end(() => resolve());
        setTimeout(() => { socket.destroy(); resolve(); }, 200).unref();
      });
    });
  }

  private accept(raw: Socket): void {
    raw.on('error', () => raw.destroy());
    const authRequired = this.opts.tokens !== null;
    if (this.secureContext === null) return this.serve(raw, raw, authRequired ? this.deadline(raw) : null);
    const deadline = this.deadline(raw);
    const socket = new TLSSocket(raw, { isServer: true, secureContext: this.secureContext });
    // A failed handshake (a plaintext client, say) closes that connection only.
    socket.on('error', (err) => {
      this.opts.log.debug({ err: err.message }, 'TLS connection error');
      socket.destroy();
      raw.destroy();
    });
    socket.once('secure', () => {
      if (!authRequired) { clearTimeout(deadline); this.serve(socket, raw, null); } else this.serve(socket, raw, deadline);
    });
  }

  private deadline(raw: Socket): NodeJS.Timeout {
    const timer = setTimeout(() => raw.destroy(), AUTH_DEADLINE_MS);
    // A connection that dies first (a failed TLS handshake, say) must not leave its timer behind.
    raw.once('close', () => clearTimeout(timer));
    return timer;
  }

  private serve(socket: Socket, raw: Socket, authDeadline: NodeJS.Timeout | null): void {
    this.sockets.add(socket);
    this.opts.onConnectionCount(this.sockets.size);
    let deadline = authDeadline;
    // Flow control is the session's (lib/protocol/session.ts): it pauses reading while the
    // connection is saturated and resumes it when replies come back or the socket drains.
    const session = new Session({
      dispatch: this.opts.dispatch,
      tokens: this.opts.tokens,
      onRequest: this.opts.onRequest,
      transport: {
        write: (text) => { socket.write(text); },
        backlog: () => socket.writableLength,
        pause: () => { if (!socket.isPaused()) socket.pause(); },
        resume: () => { if (socket.isPaused()) socket.resume(); },
        close: () => socket.end(),
      },
    });
    this.sessions.set(socket, session);
    socket.on('data', (chunk: Buffer) => {
      session.feed(chunk);
      if (deadline !== null && session.authenticated) { clearTimeout(deadline); deadline = null; }
    });
    socket.on('drain', () => session.writable());
    socket.on('end', () => { void this.finish(socket, session, HALF_CLOSE_GRACE_MS); });
    socket.on('error', () => { socket.destroy(); raw.destroy(); });
    socket.on('close', () => {
      if (deadline !== null) clearTimeout(deadline);
      session.end();
      this.sessions.delete(socket);
      this.sockets.delete(socket);
      this.opts.onConnectionCount(this.sockets.size);
    });
  }
}
