// Test support (not a test file): HTTP/1.1 over a bare node:net socket, for what an HTTP client
// library will not send (exact bytes, pipelining, no Host, CONNECT) or will not do (keep
// writing a body while the answer comes, never read the answers).
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export function openSocket(port: number, host = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Resolves when `socket` has closed (at once if it already has). */
export function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => { if (socket.closed) resolve(); else socket.once('close', () => resolve()); });
}

/**
 * Parses the complete responses at the start of `bytes` (bodies framed by Content-Length, as
 * the server frames every answer); returns them and how many bytes they took.
 */
export function parseResponses(bytes: Buffer, headOnly = false): { responses: RawResponse[]; used: number } {
  const responses: RawResponse[] = [];
  let used = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', used);
    if (end < 0) break;
    const lines = bytes.subarray(used, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0]!)?.[1] ?? NaN);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = headOnly ? 0 : Number(headers['content-length'] ?? 0);
    if (bytes.length < end + 4 + length) break;
    responses.push({ status, headers, body: bytes.subarray(end + 4, end + 4 + length).toString('utf8') });
    used = end + 4 + length;
  }
  return { responses, used };
}

/** Reads responses from `socket` until `count` have arrived. */
export function readResponses(socket: Socket, count: number): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    let pending = Buffer.alloc(0);
    const got: RawResponse[] = [];
    const onData = (chunk: Buffer): void => {
      pending = Buffer.concat([pending, chunk]);
      const { responses, used } = parseResponses(pending);
      pending = pending.subarray(used);
      got.push(...responses);
      if (got.length >= count) {
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(got);
      }
    };
    const onClose = (): void => reject(new Error(`connection closed after ${got.length} of ${count} responses`));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}

/** Writes `data`, then collects everything the server sends until the connection closes. */
export async function exchange(port: number, data: string | Buffer): Promise<Buffer> {
  const socket = await openSocket(port);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => {});
  socket.write(data);
  await closed(socket);
  return Buffer.concat(chunks);
}

/** The one response a server sent before closing, parsed (`headOnly` for an answer to HEAD). */
export async function exchangeOne(port: number, data: string | Buffer, headOnly = false): Promise<RawResponse> {
  const bytes = await exchange(port, data);
  const { responses, used } = parseResponses(bytes, headOnly);
  if (responses.length !== 1 || used !== bytes.length) throw new Error(`expected one response, got ${JSON.stringify(bytes.toString('latin1'))}`);
  return responses[0]!;
}

/**
 * Sends `head` and then `bodyBytes` bytes, 64 KiB at a time with a turn of the event loop
 * between pieces, reading nothing until the whole body is written or writing fails (like a
 * client busy uploading); then reads whatever the server sent until it closed.
 */
export async function uploadThenRead(port: number, head: string, bodyBytes: number): Promise<{ sent: number; error: string | null; answer: Buffer }> {
  const socket = await openSocket(port);
  socket.pause();
  const chunks: Buffer[] = [];
  let error: string | null = null;
  socket.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? err.message; });
  let sent = 0;
  await new Promise<void>((resolve) => {
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const next = (): void => {
      if (sent >= bodyBytes || socket.destroyed) return resolve();
      const n = Math.min(piece.length, bodyBytes - sent);
      socket.write(piece.subarray(0, n), (err) => {
        if (err) return resolve();
        sent += n;
        setImmediate(next);
      });
    };
    socket.write(head, () => next());
  });
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.resume();
  await closed(socket);
  return { sent, error, answer: Buffer.concat(chunks) };
}

/** Resolves once `condition()` holds, checking after each turn of the event loop. */
export async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
