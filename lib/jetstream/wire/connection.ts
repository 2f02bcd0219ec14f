// A second, bare connection to a NATS server for the replay's bulk read (stream-scan.ts): the
// client protocol spoken over a socket, parsed by parser.ts. Why: the client library's
// per-message work is the largest cost of a replay in this process (see parser.ts); the
// daemon's NATS connection (connect.ts) stays what everything else uses, the JetStream API
// calls of the replay (consumers, their state) included. This one only subscribes, publishes
// pull requests and receives deliveries, for the length of a replay.
//
// It connects as the daemon's connection does, with what connectCluster remembered for it
// (wireOptionsOf): the same --cluster URLs, user and password from a URL, the --cluster-creds
// credentials (JWT and a signature of the server's nonce, by the client library's own
// authenticator), TLS when a URL is tls:// or the server requires or offers it, verified against
// --cluster-ca (else the system's CAs). The server the daemon's connection is on is tried
// first, then each URL in turn. Start-up: INFO -> (TLS) -> CONNECT, PING -> PONG, or -ERR
// (a refused login) within a bounded wait. No reconnection: a connection lost, an -ERR or a
// frame that is not NATS fails the read (`onError`), which its caller retries from scratch.
import { readFileSync } from 'node:fs';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Authenticator, NatsConnection } from '@nats-io/transport-node';
import { WireParser, type WireFrame } from './parser.ts';
import { errorText } from '../../errors.ts';

export interface WireOptions {
  /** The URLs, without userinfo (nats://host:port or tls://host:port). */
  readonly servers: readonly string[];
  readonly user?: string;
  readonly pass?: string;
  /** From --cluster-creds: answers the server's nonce. */
  readonly authenticator?: Authenticator;
  /** TLS even where the server does not require it (a tls:// URL or --cluster-ca). */
  readonly tls: boolean;
  readonly caFile: string | null;
  /** The client name the server shows. */
  readonly name: string;
}

const remembered = new WeakMap<NatsConnection, WireOptions>();

/** Called by connectCluster: how to open a bare connection beside `nc`. */
export function rememberWireOptions(nc: NatsConnection, o: WireOptions): void {
  remembered.set(nc, o);
}

/** How `nc` was made (undefined when connectCluster did not make it). */
export function wireOptionsOf(nc: NatsConnection): WireOptions | undefined {
  return remembered.get(nc);
}

type Stage = 'info' | 'tls' | 'pong' | 'ready' | 'closed';

/** The server offers TLS to a connection made without: it is made again, for TLS. */
class WantsTls extends Error {}

export class Wire {
  /** The server's name (its INFO server_name): where a consumer must be to deliver here. */
  serverName = '';
  /** A failure after start-up (connection lost, -ERR, not NATS); once, then the wire is closed. */
  onError: (err: Error) => void = () => {};
  private socket: Socket;
  private stage: Stage = 'info';
  private readonly parser: WireParser;
  private readonly subs = new Map<number, (f: WireFrame) => void>();
  private nextSid = 1;
  private readonly o: WireOptions;
  private readonly host: string;
  private readonly tls: boolean;
  private started: { resolve: () => void; reject: (err: Error) => void } | null = null;

  /** A connection to the first server that takes it: `prefer` (host:port) first, then o.servers. */
  static async open(o: WireOptions, prefer: string, timeoutMs: number): Promise<Wire> {
    const first = prefer === '' ? [] : [`nats://${prefer}`];
    const urls = [...new Set([...first, ...o.servers].map((u) => new URL(u).host))].map((host) => new URL(`nats://${host}`));
    const why: string[] = [];
    for (const url of urls) {
      // A server that turns out to want TLS when none was asked for is connected to again.
      for (const tls of o.tls ? [true] : [false, true]) {
        const wire = new Wire(o, url, tls);
        try {
          await wire.start(timeoutMs);
          return wire;
        } catch (err) {
          wire.close();
          if (err instanceof WantsTls) continue;
          why.push(`${url.host}: ${errorText(err)}`);
          break;
        }
      }
    }
    throw new Error(`no NATS server took the replay's connection (${why.join('; ')})`);
  }

  private constructor(o: WireOptions, url: URL, tls: boolean) {
    this.o = o;
    this.tls = tls;
    this.host = url.hostname.replace(/^\[|\]$/g, '');
    const parser = new WireParser({ message: (f) => this.subs.get(f.sid)?.(f), control: (line) => this.control(line) });
    this.parser = parser;
    const port = Number(url.port === '' ? 4222 : url.port);
    // Without TLS the socket reads straight into the parser's buffer (see parser.ts); a
    // TLS socket wraps this one (it hands on Buffers, which the parser copies).
    this.socket = tls ? netConnect({ host: this.host, port }) : netConnect({
      host: this.host, port,
      onread: { buffer: () => parser.space(), callback: (n: number) => { this.received(() => parser.filled(n)); return true; } },
    });
    this.socket.setNoDelay(true);
    this.listen(this.socket);
  }

  private received(parse: () => void): void {
    if (this.stage === 'closed') return;
    try {
      parse();
    } catch (err) {
      this.fail(err as Error);
    }
  }

  private start(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      this.started = {
        resolve: () => { clearTimeout(timer); resolve(); },
        reject: (err) => { clearTimeout(timer); reject(err); },
      };
    });
  }

  private listen(socket: Socket): void {
    socket.on('data', (chunk: Buffer) => this.received(() => this.parser.feed(chunk)));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('the server closed the connection')));
  }

  private control(line: string): void {
    if (line.startsWith('-ERR')) {
      this.fail(new Error(`the server said ${line.slice(5)}`));
    } else if (line === 'PING') {
      this.socket.write('PONG\r\n');
    } else if (this.stage === 'info' && line.startsWith('INFO ')) {
      const info = JSON.parse(line.slice(5)) as { server_name?: string; nonce?: string; tls_required?: boolean; tls_available?: boolean };
      this.serverName = info.server_name ?? '';
      // As the client library decides: TLS when asked for, required, or merely offered.
      const offered = info.tls_required === true || info.tls_available === true;
      if (this.tls && !offered) this.fail(new Error('the server does not offer TLS'));
      else if (offered && !this.tls) this.fail(new WantsTls());
      else if (offered) this.secure(info.nonce);
      else this.login(info.nonce, false);
    } else if (this.stage === 'pong' && line === 'PONG') {
      this.stage = 'ready';
      this.started?.resolve();
      this.started = null;
    }
    // PONG, +OK and INFO (cluster changes) say nothing to a reader.
  }

  /** Moves the socket under TLS (the server sent INFO and waits for the handshake). */
  private secure(nonce: string | undefined): void {
    this.stage = 'tls';
    const plain = this.socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('close');
    const secure = tlsConnect({
      socket: plain,
      servername: isIP(this.host) === 0 ? this.host : undefined,
      ...(this.o.caFile === null ? {} : { ca: [readFileSync(this.o.caFile)] }),
    });
    this.socket = secure;
    this.listen(secure);
    secure.once('secureConnect', () => this.login(nonce, true));
  }

  private login(nonce: string | undefined, tls: boolean): void {
    const o = this.o;
    const connect = {
      verbose: false, pedantic: false, tls_required: tls, name: o.name, lang: 'tickd-replay', version: '1', protocol: 1,
      headers: true, no_responders: true,
      ...(o.user === undefined ? {} : { user: o.user, pass: o.pass }),
      ...(o.authenticator === undefined ? {} : o.authenticator(nonce)),
    };
    this.stage = 'pong';
    this.socket.write(`CONNECT ${JSON.stringify(connect)}\r\nPING\r\n`);
  }

  /** Delivers the messages of `subject` to `onMessage`; returns the subscription's id. */
  subscribe(subject: string, onMessage: (f: WireFrame) => void): number {
    const sid = this.nextSid++;
    this.subs.set(sid, onMessage);
    this.socket.write(`SUB ${subject} ${sid}\r\n`);
    return sid;
  }

  unsubscribe(sid: number): void {
    if (!this.subs.delete(sid) || this.stage === 'closed') return;
    this.socket.write(`UNSUB ${sid}\r\n`);
  }

  publish(subject: string, reply: string, payload: string): void {
    this.socket.write(`PUB ${subject} ${reply} ${Buffer.byteLength(payload)}\r\n${payload}\r\n`);
  }

  private fail(err: Error): void {
    if (this.stage === 'closed') return;
    const before = this.stage;
    this.close();
    if (this.started !== null) {
      this.started.reject(err);
      this.started = null;
    } else if (before === 'ready') {
      this.onError(err);
    }
  }

  close(): void {
    if (this.stage === 'closed') return;
    this.stage = 'closed';
    this.subs.clear();
    this.socket.destroy();
  }
}
