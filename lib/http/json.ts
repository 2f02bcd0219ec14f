// JSON output for the HTTP interface. JSON.stringify throws on bigint, and a bigint turned into
// a Number loses digits above 2^53, so this writer emits bigints as their exact decimal digits
// (1775822400123456789 stays 1775822400123456789). Every response body leaves through
// sendJson / sendError, so every error body is {"error": string}.
import type { ServerResponse } from 'node:http';

export type JsonValue =
  | null | boolean | number | string | bigint
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue | undefined };

/** Serializes like JSON.stringify, but bigints become exact integer literals. */
export function toJson(value: JsonValue): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'bigint': return value.toString();
    case 'number': return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean': return value ? 'true' : 'false';
    case 'string': return JSON.stringify(value);
    default: break;
  }
  if (Array.isArray(value)) return `[${value.map((v: JsonValue) => toJson(v)).join(',')}]`;
  const parts: string[] = [];
  for (const [key, v] of Object.entries(value as { readonly [key: string]: JsonValue | undefined })) {
    if (v !== undefined) parts.push(`${JSON.stringify(key)}:${toJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

export function sendJson(res: ServerResponse, status: number, value: JsonValue, headers: Record<string, string> = {}): void {
  const body = toJson(value);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: message }, headers);
}

export function sendNoContent(res: ServerResponse): void {
  res.writeHead(204);
  res.end();
}
