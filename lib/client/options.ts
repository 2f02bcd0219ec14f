// What connect() takes, with its defaults, read once into the settings the client runs on.
// Addresses are tried in order on every (re)connection; the first that accepts serves.
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';

export const DEFAULT_PORT = 5678;
export const DEFAULT_ADDRESS = '127.0.0.1:5678';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
  /** As given, for messages. */
  readonly text: string;
}

/** TLS: true for the system's CAs, or Node's tls.connect options (ca, servername, rejectUnauthorized, cert, key...). */
export type TlsOption = boolean | TlsConnectionOptions;

export interface ClientOptions {
  /** `HOST:PORT`, `[IPv6]:PORT` or `HOST` (port 5678), one or several (a list, or comma-separated). Default 127.0.0.1:5678. */
  readonly addresses?: string | readonly string[];
  readonly tls?: TlsOption;
  /** A secret of the daemon's auth_file, sent as AUTH on every connection. */
  readonly token?: string;
  /** Default per-call timeout, ms (a listing: the longest wait for its next line); 0 for none. Default 10 000. */
  readonly timeout?: number;
  /** Giving up on one address, ms (TCP and TLS handshake, AUTH). Default 10 000. */
  readonly connectTimeout?: number;
  /** Requests written and not yet answered, at most; further calls wait, unsent, in order. Default 4096. */
  readonly maxInflight?: number;
  /**
   * After a lost connection: ms to wait before round `attempt` (1, 2, ...) of trying the
   * addresses, or null to give up (pending calls then fail). Default min(attempt × 100, 2000), forever.
   */
  readonly retryStrategy?: (attempt: number) => number | null;
}

export interface Settings {
  readonly endpoints: readonly Endpoint[];
  readonly tls: TlsConnectionOptions | null;
  readonly token: string | null;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly maxInflight: number;
  readonly retryStrategy: (attempt: number) => number | null;
}

/** One address: HOST:PORT, [IPv6]:PORT, or HOST alone (port 5678); a message when it is none. */
export function parseEndpoint(text: string): Endpoint | string {
  const t = text.trim();
  let host: string;
  let port = DEFAULT_PORT;
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::(\d+))?$/.exec(t);
  if (v6 !== null) {
    host = v6[1]!;
    if (v6[2] !== undefined) port = Number(v6[2]);
  } else {
    const m = /^([A-Za-z0-9._-]+)(?::(\d+))?$/.exec(t);
    if (m === null) return `address "${t}" is not HOST:PORT (IPv6 in brackets: [::1]:5678)`;
    host = m[1]!;
    if (m[2] !== undefined) port = Number(m[2]);
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) return `address "${t}": port must be 1 to 65535`;
  return { host, port, text: t };
}

function milliseconds(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 2_147_483_647) throw new TypeError(`${name} must be a number of milliseconds from 0 to 2147483647`);
  return v;
}

export function defaultRetryStrategy(attempt: number): number {
  return Math.min(attempt * 100, 2000);
}

export function readOptions(o: ClientOptions): Settings {
  const list = o.addresses === undefined ? [DEFAULT_ADDRESS] : typeof o.addresses === 'string' ? o.addresses.split(',') : o.addresses;
  const endpoints: Endpoint[] = [];
  for (const part of list) {
    if (typeof part !== 'string') throw new TypeError('addresses: each address is a string HOST:PORT');
    if (part.trim() === '') continue;
    const ep = parseEndpoint(part);
    if (typeof ep === 'string') throw new TypeError(`addresses: ${ep}`);
    endpoints.push(ep);
  }
  if (endpoints.length === 0) throw new TypeError('addresses: no address given');
  if (o.token !== undefined && (typeof o.token !== 'string' || o.token === '' || /[\0\r\n]/.test(o.token))) {
    throw new TypeError('token must be a non-empty string without NUL, CR or LF');
  }
  const maxInflight = o.maxInflight ?? 4096;
  if (!Number.isInteger(maxInflight) || maxInflight < 1) throw new TypeError('maxInflight must be a positive integer');
  return {
    endpoints,
    tls: o.tls === undefined || o.tls === false ? null : o.tls === true ? {} : o.tls,
    token: o.token ?? null,
    timeoutMs: milliseconds('timeout', o.timeout, 10_000),
    connectTimeoutMs: milliseconds('connectTimeout', o.connectTimeout, 10_000) || 10_000,
    maxInflight,
    retryStrategy: o.retryStrategy ?? defaultRetryStrategy,
  };
}
