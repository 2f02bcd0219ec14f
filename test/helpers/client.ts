// A line-protocol client for tests: send raw bytes, or send a command and collect its
// response lines up to the terminal `<rid> OK[...]` / `<rid> ERROR ...` line.
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Address } from './daemon.ts';

export class LineClient {
  readonly socket: Socket;
  private buf = '';
  private lines: string[] = [];
  private waiters: Array<() => void> = [];
  closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buf += chunk;
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        this.lines.push(this.buf.slice(0, i));
        this.buf = this.buf.slice(i + 1);
      }
      this.wake();
    });
    socket.on('close', () => { this.closed = true; this.wake(); });
    socket.on('error', () => {});
  }

  static connect(addr: Address): Promise<LineClient> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: addr.host, port: addr.port }, () => resolve(new LineClient(s)));
      s.once('error', reject);
    });
  }

  static connectTls(addr: Address, opts: ConnectionOptions): Promise<LineClient> {
    return new Promise((resolve, reject) => {
      const s = tlsConnect({ host: addr.host, port: addr.port, ...opts }, () => resolve(new LineClient(s)));
      s.once('error', reject);
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** The next line, or null if the connection closes first. */
  async readLine(timeoutMs = 5000): Promise<string | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.lines.length === 0) {
      if (this.closed) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a line');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
    return this.lines.shift()!;
  }

  /** Sends `<rid> <rest>` and returns every response line of it, terminal line last. */
  async request(rid: string, rest: string, timeoutMs = 5000): Promise<string[]> {
    this.write(`${rid} ${rest}\n`);
    return this.collect(rid, timeoutMs);
  }

  async collect(rid: string, timeoutMs = 5000): Promise<string[]> {
    const out: string[] = [];
    for (;;) {
      const line = await this.readLine(timeoutMs);
      if (line === null) throw new Error(`connection closed; got ${JSON.stringify(out)}`);
      out.push(line);
      if (line === `${rid} OK` || line.startsWith(`${rid} OK `) || line.startsWith(`${rid} ERROR`)) return out;
    }
  }

  /** Resolves once the server has closed the connection. */
  async waitClosed(timeoutMs = 8000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('connection still open');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  /** True when nothing arrives within ms (for "no response" assertions, after a sync point). */
  pending(): number {
    return this.lines.length;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Now, in nanoseconds since the epoch (millisecond resolution): a due time for SET. */
export const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** The third word of GET's first line: the job's status (`<rid> OK <status> <execution>`). */
export async function jobStatus(c: LineClient, id: string): Promise<string | undefined> {
  return (await c.request('g', `GET ${id}`))[0]!.split(' ')[2];
}

/** STAT as a map. */
export async function stat(client: LineClient, rid = 'st', timeoutMs = 5000): Promise<Map<string, string>> {
  const lines = await client.request(rid, 'STAT', timeoutMs);
  const m = new Map<string, string>();
  for (const l of lines.slice(0, -1)) {
    const [, key, value] = l.split(' ');
    m.set(key!, value!);
  }
  return m;
}

/** Polls `probe` until it returns true (a condition, not a sleep). */
export async function waitFor(probe: () => Promise<boolean> | boolean, timeoutMs = 10000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
