// Closing an HTTP connection without losing the answer already sent on it. When a socket is
// closed while bytes the client sent are still unread, the kernel answers with RST instead of
// FIN, and a client still busy sending its request body (an early 405 or 413) may never read
// the answer that was already on the wire: it sees EPIPE or ECONNRESET instead. So a connection
// we end after an answer lingers: FIN after the answer (socket.end), then whatever the client
// still sends is read and thrown away until it closes its side, for at most `lingerMs` and
// `lingerBytes`; past either bound the socket is destroyed (the client had its chance).
//
// Invariants: a lingering socket is detached from Node's HTTP parser, so no request sent after
// the answer is parsed or served; nothing more is written to it; its timer never keeps the
// process alive. lingerClose is idempotent.
import type { Socket } from 'node:net';

export interface LingerLimits {
  readonly lingerMs: number;
  readonly lingerBytes: number;
}

const lingering = new WeakSet<Socket>();

export const isLingering = (socket: Socket): boolean => lingering.has(socket);

/** Ends `socket` after what was written to it, discarding what the client still sends. */
export function lingerClose(socket: Socket, limits: LingerLimits): void {
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  const timer = setTimeout(() => socket.destroy(), limits.lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // Node's listeners may be gone (CONNECT hands the socket over bare): a reset must not throw.
  socket.on('error', () => socket.destroy());
  // Node's parser reads the socket directly; adding a 'data' listener makes Node hand reading
  // back to the stream, and removing Node's own keeps the parser from seeing the rest.
  socket.removeAllListeners('data');
  let discarded = 0;
  socket.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limits.lingerBytes) socket.destroy();
  });
  // The parser read the socket behind the stream's back, so the stream still counts a read
  // as pending and would never start one (were reading stopped now, it would stay stopped);
  // an empty push ends that read, as documented for readable.push('').
  socket.push(Buffer.alloc(0));
  socket.resume();
  socket.end();
}

/**
 * Makes Node's own close after a `Connection: close` response linger too: its HTTP server
 * ends such a connection with socket.destroySoon(), which destroys it once the FIN is out.
 */
export function lingerOnDestroySoon(socket: Socket, limits: LingerLimits): void {
  socket.destroySoon = () => lingerClose(socket, limits);
}
