// From options and environment to what a run of `tickd ctl` needs: where and how to connect
// (tickd-ctl(1) OPTIONS, ENVIRONMENT) and how to print. An option wins over its environment
// variable. Pure apart from the reads it is handed (the token file, the CA file), so that a
// bad value is a usage error (exit 2) found before anything connects.
//
// The token: --token, else --token-file, else TICKD_TOKEN, else TICKD_TOKEN_FILE. A token file
// holds the secret on its first line (a final newline is not part of it). Messages name the
// file, never its content.
import { parseEndpoint, type Endpoint } from '../client/options.ts';
import type { OptionValues } from './args.ts';
import { UsageError } from './errors.ts';
import { parseDurationMs } from './when.ts';

/** Addresses are read as the client library reads them. */
export { parseEndpoint, type Endpoint };

export const DEFAULT_ADDR = '127.0.0.1:5678';
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_INTERVAL_MS = 1000;

export interface TlsSettings {
  /** PEM bytes of --cacert; null: the system's trusted CAs. */
  readonly ca: Buffer | null;
  readonly servername: string | null;
  readonly insecure: boolean;
}

export interface ConnectSettings {
  readonly endpoints: readonly Endpoint[];
  readonly tls: TlsSettings | null;
  readonly token: string | null;
  readonly timeoutMs: number;
}

export type Env = Readonly<Record<string, string | undefined>>;
export type ReadFile = (path: string) => Buffer;

function flag(options: OptionValues, env: Env, name: 'tls' | 'insecure', variable: string): boolean {
  if (options[name] === true) return true;
  const v = env[variable];
  if (v === undefined || v === '' || /^(0|false|no|off)$/i.test(v)) return false;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  throw new UsageError(`${variable} must be 1 or 0, got "${v}"`);
}

function text(options: OptionValues, env: Env, name: 'addr' | 'token-file' | 'cacert' | 'servername' | 'timeout', variable: string): string | undefined {
  const v = options[name];
  if (typeof v === 'string') return v;
  const e = env[variable];
  return e === undefined || e === '' ? undefined : e;
}

function readToken(path: string, read: ReadFile, from: string): string {
  let raw: string;
  try {
    raw = read(path).toString('utf8');
  } catch (err) {
    throw new UsageError(`cannot read the token file ${path} (${from}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const nl = raw.indexOf('\n');
  const secret = (nl === -1 ? raw : raw.slice(0, nl)).replace(/\r$/, '');
  if (secret === '') throw new UsageError(`the token file ${path} (${from}) is empty`);
  return secret;
}

function checkSecret(secret: string, from: string): string {
  if (secret === '') throw new UsageError(`the token given by ${from} is empty`);
  if (/[\0\r\n]/.test(secret)) throw new UsageError(`the token given by ${from} holds a NUL, CR or LF`);
  return secret;
}

function token(options: OptionValues, env: Env, read: ReadFile): string | null {
  const flagToken = options.token;
  const flagFile = options['token-file'];
  if (typeof flagToken === 'string' && typeof flagFile === 'string') throw new UsageError('give --token or --token-file, not both');
  if (typeof flagToken === 'string') return checkSecret(flagToken, '--token');
  if (typeof flagFile === 'string') return checkSecret(readToken(flagFile, read, '--token-file'), '--token-file');
  const envToken = env['TICKD_TOKEN'];
  if (envToken !== undefined && envToken !== '') return checkSecret(envToken, 'TICKD_TOKEN');
  const envFile = env['TICKD_TOKEN_FILE'];
  if (envFile !== undefined && envFile !== '') return checkSecret(readToken(envFile, read, 'TICKD_TOKEN_FILE'), 'TICKD_TOKEN_FILE');
  return null;
}

export function connectSettings(options: OptionValues, env: Env, read: ReadFile): ConnectSettings {
  const addr = text(options, env, 'addr', 'TICKD_ADDR') ?? DEFAULT_ADDR;
  const endpoints: Endpoint[] = [];
  for (const part of addr.split(',')) {
    if (part.trim() === '') continue;
    const ep = parseEndpoint(part);
    if (typeof ep === 'string') throw new UsageError(`--addr: ${ep}`);
    endpoints.push(ep);
  }
  if (endpoints.length === 0) throw new UsageError('--addr: no address given');
  const cacert = text(options, env, 'cacert', 'TICKD_CACERT');
  const servername = text(options, env, 'servername', 'TICKD_SERVERNAME') ?? null;
  const insecure = flag(options, env, 'insecure', 'TICKD_INSECURE');
  const useTls = flag(options, env, 'tls', 'TICKD_TLS') || cacert !== undefined || servername !== null || insecure;
  let ca: Buffer | null = null;
  if (cacert !== undefined) {
    try {
      ca = read(cacert);
    } catch (err) {
      throw new UsageError(`cannot read the CA file ${cacert}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  const timeoutText = text(options, env, 'timeout', 'TICKD_TIMEOUT');
  const timeoutMs = timeoutText === undefined ? DEFAULT_TIMEOUT_MS : parseDurationMs(timeoutText, 1, 3_600_000);
  if (typeof timeoutMs === 'string') throw new UsageError(`--timeout: ${timeoutMs}`);
  return {
    endpoints,
    tls: useTls ? { ca, servername, insecure } : null,
    token: token(options, env, read),
    timeoutMs,
  };
}

export type OutputFormat = 'table' | 'json' | 'raw';

export function outputFormat(options: OptionValues): OutputFormat {
  if (options.json === true && options.raw === true) throw new UsageError('give --json or --raw, not both');
  return options.json === true ? 'json' : options.raw === true ? 'raw' : 'table';
}

/** Colour only on a terminal, and never when NO_COLOR is set to anything but the empty string. */
export function useColor(isTTY: boolean | undefined, env: Env): boolean {
  return isTTY === true && (env['NO_COLOR'] === undefined || env['NO_COLOR'] === '');
}

export function intervalMs(options: OptionValues): number {
  const v = options.interval;
  if (typeof v !== 'string') return DEFAULT_INTERVAL_MS;
  const ms = parseDurationMs(v, 50, 3_600_000);
  if (typeof ms === 'string') throw new UsageError(`--interval: ${ms}`);
  return ms;
}
