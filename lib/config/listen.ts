// `host:port` listen addresses: an IPv4 literal or a bracketed IPv6 literal, port 0..65535
// (0 asks the kernel for a free port, which the tests use).
import { isIPv4, isIPv6 } from 'node:net';
import { MAX_PORT } from '../domain/limits.ts';
import type { ListenAddress } from './schema.ts';

export function parseListen(text: string): ListenAddress | string {
  const m = /^(?:\[([^\]]+)\]|([^:\[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) return 'must be host:port with IPv6 in brackets (e.g. 127.0.0.1:5678, [::1]:5678)';
  const host = m[1] ?? m[2] ?? '';
  if (m[1] !== undefined ? !isIPv6(host) : !isIPv4(host)) {
    return `host "${host}" is not an IPv4 address or a bracketed IPv6 address`;
  }
  const port = Number(m[3]);
  if (port > MAX_PORT) return `port ${port} is out of range (0-${MAX_PORT})`;
  return { host, port, text };
}

export function formatAddress(host: string, port: number): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}
