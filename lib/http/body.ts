// Request bodies: the media type must be application/json (a utf-8 charset parameter is
// allowed), at most MAX_BODY_BYTES, valid UTF-8 and valid JSON. Every failure is returned
// as an HTTP status with a message, never thrown: a client cannot crash the worker with a
// body. Reading stops at the limit, so an oversized body is never buffered whole. A route whose
// body carries nanoseconds as JSON numbers (PUT /schedules) parses with `exactIntegers`, so an
// integer beyond 2^53 arrives as the exact bigint its digits say, never a rounded double.
// A key given twice in one object is refused (duplicate-keys.ts), as TCP refuses an option
// given twice, instead of JSON.parse's silent last value.
import type { IncomingMessage } from 'node:http';
import { firstDuplicateKey } from './duplicate-keys.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

export type BodyResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly status: 400 | 413 | 415; readonly message: string };

/** A JSON object (not null, not an array), as a body or a field of one. */
export const isObject = (v: unknown): v is Readonly<Record<string, unknown>> => typeof v === 'object' && v !== null && !Array.isArray(v);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** null when the Content-Type header names JSON; otherwise why not. */
export function checkMediaType(header: string | undefined): string | null {
  if (header === undefined || header.trim() === '') return 'Content-Type must be application/json';
  const [type, ...params] = header.split(';');
  if (type!.trim().toLowerCase() !== 'application/json') return 'Content-Type must be application/json';
  for (const param of params) {
    const eq = param.indexOf('=');
    const name = param.slice(0, eq < 0 ? param.length : eq).trim().toLowerCase();
    const value = eq < 0 ? '' : param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    // Bodies are always decoded as UTF-8; any other declared charset would be misread.
    if (name === 'charset' && value !== 'utf-8' && value !== 'utf8') return 'Content-Type charset must be utf-8';
  }
  return null;
}

/** What JSON.parse hands a reviver (its third argument: the literal's source text, Node 21 on). */
export type Reviver = (key: string, value: unknown, context?: { readonly source?: string }) => unknown;

/** Integer literals beyond 2^53 become exact bigints; every other value stays as JSON.parse made it. */
export const exactIntegers: Reviver = (_key, value, context) => {
  const source = context?.source;
  if (typeof value !== 'number' || Number.isSafeInteger(value) || source === undefined || !/^-?[0-9]+$/.test(source)) return value;
  return BigInt(source);
};

/** Parses already-read body bytes as a JSON document. */
export function parseJsonBytes(bytes: Buffer, reviver?: Reviver): BodyResult {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, status: 400, message: 'request body is not valid UTF-8' };
  }
  if (text.trim() === '') return { ok: false, status: 400, message: 'request body is empty; a JSON object is required' };
  let value: unknown;
  try {
    value = JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]) as unknown;
  } catch {
    return { ok: false, status: 400, message: 'request body is not valid JSON' };
  }
  const twice = typeof value === 'object' && value !== null ? firstDuplicateKey(text) : null;
  if (twice !== null) return { ok: false, status: 400, message: `${clip(twice)}: given twice` };
  return { ok: true, value };
}

/** A key as an error names it: a client's key of a megabyte is not sent back whole. */
function clip(key: string): string {
  return key.length <= 64 ? key : `${key.slice(0, 64)}...`;
}

const tooLarge: BodyResult = { ok: false, status: 413, message: `request body exceeds ${MAX_BODY_BYTES} bytes` };

/** Reads and parses the JSON body of `req`. Resolves, never rejects. */
export function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES, reviver?: Reviver): Promise<BodyResult> {
  const mediaError = checkMediaType(req.headers['content-type']);
  if (mediaError !== null) return Promise.resolve({ ok: false, status: 415, message: mediaError });
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve(tooLarge);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        // Keep the stream flowing (discarding) so the 413 can be written back.
        settle(tooLarge);
        req.resume();
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => settle(parseJsonBytes(Buffer.concat(chunks, size), reviver)));
    req.once('error', () => settle({ ok: false, status: 400, message: 'request body could not be read' }));
    req.once('close', () => settle({ ok: false, status: 400, message: 'request body is incomplete' }));
  });
}
