// Per-connection admission: what one HTTP connection can make the worker hold stays bounded,
// whatever the client sends. Node's HTTP server parses every request in a chunk it has read
// (up to 64 KiB: thousands of pipelined `GET /jobs`) and emits each at once; it stops reading
// only when *response* bytes back up, and our handlers write nothing until the primary has
// answered. Without this gate one connection that pipelines requests and never reads the
// answers makes the worker dispatch all of them (measured: +1.5 GB in 3 s).
//
// Invariants, per connection:
// - At most `maxInFlight` requests are being handled (handler started, response not closed).
//   A request arriving beyond that, or while more than `maxUnwrittenBytes` of responses wait
//   in the socket, or while earlier ones wait, waits in arrival order and starts as earlier
//   ones finish (response close) or the socket drains. Responses still leave in request order
//   (Node queues them).
// - While a request waits or responses back up, the socket is paused: nothing more is read,
//   so what waits is at most what Node had already parsed from the chunk in hand.
// - Node resumes the socket by itself (after every parsed message, when a body is read or
//   dumped, on drain, after a response): every 'resume' checks again and pauses again.
// - A connection being closed (its writable side ended) is never held, and nothing waiting on
//   it starts: its answer is out and its socket must keep reading to close cleanly (linger.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface GateLimits {
  readonly maxInFlight: number;
  readonly maxUnwrittenBytes: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Connection {
  inFlight: number;
  /** Paused by this gate (not by Node's own body backpressure): this gate resumes it. */
  held: boolean;
  readonly waiting: Array<{ readonly req: IncomingMessage; readonly res: ServerResponse }>;
}

const ending = (socket: Socket): boolean => socket.writableEnded || socket.destroyed;

export class ConnectionGate {
  readonly #limits: GateLimits;
  readonly #handler: Handler;
  readonly #connections = new WeakMap<Socket, Connection>();

  constructor(limits: GateLimits, handler: Handler) {
    this.#limits = limits;
    this.#handler = handler;
  }

  /** For the server's 'connection' event; must run after Node's own listener (register later). */
  attach(socket: Socket): void {
    const conn: Connection = { inFlight: 0, held: false, waiting: [] };
    this.#connections.set(socket, conn);
    socket.on('resume', () => {
      if (this.#mustHold(socket, conn)) this.#hold(socket, conn);
    });
    socket.on('drain', () => this.#pump(socket, conn));
    socket.once('close', () => { conn.waiting.length = 0; });
  }

  /** Starts the handler for `req` now, or later in arrival order. */
  admit(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket as Socket;
    const conn = this.#connections.get(socket);
    if (conn === undefined) return this.#handler(req, res);
    if (ending(socket)) return;
    if (conn.waiting.length > 0 || !this.#hasRoom(socket, conn)) {
      conn.waiting.push({ req, res });
      this.#hold(socket, conn);
      return;
    }
    this.#start(socket, conn, req, res);
  }

  #start(socket: Socket, conn: Connection, req: IncomingMessage, res: ServerResponse): void {
    conn.inFlight++;
    res.once('close', () => {
      conn.inFlight--;
      this.#pump(socket, conn);
    });
    this.#handler(req, res);
  }

  #pump(socket: Socket, conn: Connection): void {
    if (ending(socket)) {
      conn.waiting.length = 0;
      return;
    }
    while (conn.waiting.length > 0 && this.#hasRoom(socket, conn)) {
      const next = conn.waiting.shift()!;
      this.#start(socket, conn, next.req, next.res);
    }
    if (conn.held && !this.#mustHold(socket, conn)) {
      conn.held = false;
      socket.resume();
    }
  }

  #hasRoom(socket: Socket, conn: Connection): boolean {
    return conn.inFlight < this.#limits.maxInFlight && socket.writableLength <= this.#limits.maxUnwrittenBytes;
  }

  #mustHold(socket: Socket, conn: Connection): boolean {
    return !ending(socket) && (conn.waiting.length > 0 || socket.writableLength > this.#limits.maxUnwrittenBytes);
  }

  #hold(socket: Socket, conn: Connection): void {
    conn.held = true;
    // A 'resume' can arrive after a pause(): resume() defers it to the next tick, and Node's
    // listener then restarts reading although the stream is no longer flowing. pause() on a
    // paused stream emits nothing, so emit 'pause' for Node's listener to stop reading again.
    if (socket.isPaused()) socket.emit('pause');
    else socket.pause();
  }
}
