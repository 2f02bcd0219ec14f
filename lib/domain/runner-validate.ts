// Validation of runner specs before a rule is stored (tickd-protocol(7) RUNNERS),
// shared by TCP `RULE SET` and HTTP `PUT /rules`, plus the one DSN/URL parser per scheme that
// the amqp and redis runners build their connection targets on at execution time: what
// `RULE SET` accepts is exactly what execution can parse, so these hold the stricter rule
// wherever a check could go either way.
//
// Invariants:
// - Every runner string fits the logfile's 2-byte length prefix (<= 65535 UTF-8 bytes) and
//   every list its 2-byte count (<= 65535 items): the limits are the codec's (limits.ts).
// - No runner string contains NUL, CR or LF: NUL cannot travel in argv (spawn would throw at
//   execution time) and a line break would split a LISTRULES line, letting stored data
//   inject fake protocol replies.
// - AMQP exchange and routing key are AMQP short strings (<= 255 bytes); both may be empty
//   (the empty exchange is the broker's default exchange).
// - Plaintext only: `amqps://` and `rediss://` are rejected with a message saying so.
// - Input that is not what the types promise (HTTP JSON) gives a message, never an exception.
import { MAX_LIST_ITEMS, MAX_PORT, MAX_STRING_BYTES } from './limits.ts';
import {
  HTTP_METHODS, REDIS_COMMANDS, type HttpMethod, type RedisCommand, type RunnerSpec,
} from './runner-spec.ts';

export const MAX_AMQP_SHORTSTR_BYTES = 255;

const DEFAULT_AMQP_PORT = 5672;
const DEFAULT_REDIS_PORT = 6379;
// Redis's SELECT reads its index as a C int: a larger one could never be selected.
const MAX_REDIS_DB = 2147483647;
const FORBIDDEN_CHARS = /[\0\r\n]/;

export interface AmqpDsnParts {
  readonly host: string;
  readonly port: number;
  /** Absent when the DSN has no user (the broker default `guest:guest` then applies). */
  readonly user?: string;
  readonly password?: string;
  /** Percent-decoded; `/` when the DSN has no vhost. */
  readonly vhost: string;
}

export interface RedisUrlParts {
  readonly host: string;
  readonly port: number;
  readonly username?: string;
  readonly password?: string;
  readonly db?: number;
}

export function isHttpMethod(s: string): s is HttpMethod {
  return (HTTP_METHODS as readonly string[]).includes(s);
}

export function isRedisCommand(s: string): s is RedisCommand {
  return (REDIS_COMMANDS as readonly string[]).includes(s);
}

function checkString(field: string, v: unknown, opts: { nonEmpty?: boolean; maxBytes?: number } = {}): string | null {
  if (typeof v !== 'string') return `${field} must be a string`;
  const max = opts.maxBytes ?? MAX_STRING_BYTES;
  // UTF-8 never takes fewer bytes than UTF-16 code units, so only long strings need measuring.
  if (v.length > max || (v.length * 3 > max && Buffer.byteLength(v, 'utf8') > max)) {
    return `${field} too long (max ${max} bytes)`;
  }
  if (FORBIDDEN_CHARS.test(v)) return `${field} must not contain NUL or line-break characters`;
  if (opts.nonEmpty === true && v.length === 0) return `${field} must not be empty`;
  return null;
}

function checkList(field: string, v: unknown): string | null {
  if (!Array.isArray(v)) return `${field} must be an array of strings`;
  if (v.length > MAX_LIST_ITEMS) return `too many ${field} (max ${MAX_LIST_ITEMS})`;
  return null;
}

/**
 * The server-URL parsing shared by the amqp DSN and the redis URL (not http URLs: those are
 * httpUrlError's): `scheme://[user[:password]@]host[:port][/path]`, plaintext scheme only,
 * credentials percent-decoded; the caller interprets the path. Messages start with `label`.
 */
function parseServerUrl(
  label: string, s: unknown, scheme: string, tlsScheme: string,
): { url: URL; host: string; port: number | null; user?: string; password?: string } | string {
  if (typeof s !== 'string') return `${label} must be a string`;
  const lower = s.slice(0, tlsScheme.length + 3).toLowerCase();
  if (lower === `${tlsScheme}://`) return `${label}: ${tlsScheme}:// (TLS) is not supported; use ${scheme}://`;
  if (!lower.startsWith(`${scheme}://`)) return `${label} must start with ${scheme}://`;
  // A raw `?`/`#` anywhere: in userinfo they would have to be percent-encoded anyway.
  if (s.includes('?') || s.includes('#')) return `${label} must not have a query or fragment`;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return `${label} is not a valid URL`;
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') return `${label} has no host`;
  let port: number | null = null;
  if (url.port !== '') {
    port = Number(url.port);
    if (port < 1 || port > MAX_PORT) return `${label} port must be 1 to ${MAX_PORT}`;
  }
  try {
    const user = url.username === '' ? undefined : decodeURIComponent(url.username);
    const password = url.password === '' ? undefined : decodeURIComponent(url.password);
    return { url, host, port, ...(user !== undefined && { user }), ...(password !== undefined && { password }) };
  } catch {
    return `${label} has invalid percent-encoding in its credentials`;
  }
}

/** `amqp://[user[:password]@]host[:port][/vhost]` -> parts, or an error message. */
export function parseAmqpDsn(dsn: string): AmqpDsnParts | string {
  const p = parseServerUrl('amqp dsn', dsn, 'amqp', 'amqps');
  if (typeof p === 'string') return p;
  const path = p.url.pathname;
  const raw = path.startsWith('/') ? path.slice(1) : path;
  if (raw.includes('/')) return 'amqp dsn vhost must be a single path segment (write / as %2F)';
  let vhost: string;
  try {
    vhost = decodeURIComponent(raw);
  } catch {
    return 'amqp dsn has invalid percent-encoding in its vhost';
  }
  return {
    host: p.host,
    port: p.port ?? DEFAULT_AMQP_PORT,
    ...(p.user !== undefined && { user: p.user }),
    ...(p.password !== undefined && { password: p.password }),
    vhost: vhost === '' ? '/' : vhost,
  };
}

/** `redis://[user[:password]@]host[:port][/db]` -> parts, or an error message. */
export function parseRedisUrl(url: string): RedisUrlParts | string {
  const p = parseServerUrl('redis url', url, 'redis', 'rediss');
  if (typeof p === 'string') return p;
  const path = p.url.pathname;
  let db: number | undefined;
  if (path !== '' && path !== '/') {
    const digits = path.slice(1);
    if (!/^[0-9]{1,10}$/.test(digits) || Number(digits) > MAX_REDIS_DB) {
      return 'redis url database must be a non-negative integer (redis://host:port/0)';
    }
    db = Number(digits);
  }
  return {
    host: p.host,
    port: p.port ?? DEFAULT_REDIS_PORT,
    ...(p.user !== undefined && { username: p.user }),
    ...(p.password !== undefined && { password: p.password }),
    ...(db !== undefined && { db }),
  };
}

/**
 * The one http(s) URL check (rules, the http runner, the configuration): null when `s` starts
 * with `http://` or `https://` (lowercase), parses, and names a host; else why not.
 */
export function httpUrlError(s: string): string | null {
  if (!s.startsWith('http://') && !s.startsWith('https://')) return 'http url must start with http:// or https://';
  let parsed: URL;
  try {
    parsed = new URL(s);
  } catch {
    return 'http url is not a valid URL';
  }
  return parsed.hostname === '' ? 'http url has no host' : null;
}

function validateHttpUrl(url: unknown): string | null {
  return checkString('http url', url, { nonEmpty: true }) ?? httpUrlError(url as string);
}

function validateEach(
  listField: string, itemField: string, list: unknown, item: (s: string, i: number) => string | null,
): string | null {
  const err = checkList(listField, list);
  if (err !== null) return err;
  const items = list as unknown[];
  for (let i = 0; i < items.length; i++) {
    const e = checkString(`${itemField} ${i + 1}`, items[i]) ?? item(items[i] as string, i);
    if (e !== null) return e;
  }
  return null;
}

/** null when the runner may be stored, else a message naming the offending field. */
export function validateRunner(spec: RunnerSpec): string | null {
  if (typeof spec !== 'object' || spec === null) return 'runner must be an object';
  // Each field is read as unknown: HTTP JSON may not match the declared types.
  const r = spec as unknown as Record<string, unknown>;
  switch (spec.type) {
    case 'shell':
      return checkString('shell command', r.command, { nonEmpty: true });
    case 'direct':
      return checkString('direct executable', r.executable, { nonEmpty: true })
        ?? validateEach('direct args', 'direct argument', r.args, () => null);
    case 'http':
      if (typeof r.method !== 'string' || !isHttpMethod(r.method)) {
        return 'http method must be one of GET, POST, PUT, DELETE';
      }
      return validateHttpUrl(r.url);
    case 'awf':
      return checkString('awf workflow', r.workflow, { nonEmpty: true })
        ?? ((r.workflow as string).startsWith('-') ? 'awf workflow must not start with "-"' : null)
        ?? validateEach('awf inputs', 'awf input', r.inputs, (s, i) =>
          s.indexOf('=') > 0 ? null : `awf input ${i + 1} must be key=value with a non-empty key`);
    case 'amqp': {
      const dsn = checkString('amqp dsn', r.dsn, { nonEmpty: true });
      if (dsn !== null) return dsn;
      const parsed = parseAmqpDsn(r.dsn as string);
      if (typeof parsed === 'string') return parsed;
      return checkString('amqp exchange', r.exchange, { maxBytes: MAX_AMQP_SHORTSTR_BYTES })
        ?? checkString('amqp routing_key', r.routing_key, { maxBytes: MAX_AMQP_SHORTSTR_BYTES });
    }
    case 'redis': {
      const url = checkString('redis url', r.url, { nonEmpty: true });
      if (url !== null) return url;
      const parsed = parseRedisUrl(r.url as string);
      if (typeof parsed === 'string') return parsed;
      if (typeof r.command !== 'string' || !isRedisCommand(r.command)) {
        return 'redis command must be one of PUBLISH, RPUSH, LPUSH, SET (case-sensitive)';
      }
      return checkString('redis key', r.key, { nonEmpty: true });
    }
    default:
      return `unknown runner type (expected shell, direct, http, awf, amqp, redis)`;
  }
}
