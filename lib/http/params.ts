// Path and query parameters shared by the /jobs and /rules routes. Path ids arrive already
// percent-decoded (polka decodes params when the path holds a '%'; a malformed escape stays
// raw and fails validation on its '%'), then are validated exactly like TCP identifiers.
import { validateIdentifier, validatePattern } from '../domain/identifier.ts';
import { sendError } from './json.ts';
import type { Call } from './route.ts';

/** The single value of a query parameter: undefined when absent, null when repeated. */
export function queryParam(call: Call, name: string): string | undefined | null {
  const v: unknown = (call.req.query as Record<string, unknown>)[name];
  if (v === undefined || typeof v === 'string') return v;
  return null;
}

/** The path id, validated; null after a 400 has been sent. */
export function pathId(call: Call, kind: 'job' | 'rule'): string | null {
  const id = call.req.params['id'] ?? '';
  const error = validateIdentifier(kind, id);
  if (error === null) return id;
  sendError(call.res, 400, error);
  return null;
}

/** The optional `prefix` query parameter ('' when absent: list all); null after a 400 has been sent. */
export function prefixParam(call: Call): string | null {
  const prefix = queryParam(call, 'prefix');
  if (prefix === undefined) return '';
  if (prefix === null) {
    sendError(call.res, 400, 'query parameter prefix must be given at most once');
    return null;
  }
  const error = validatePattern(prefix);
  if (error === null) return prefix;
  sendError(call.res, 400, `query parameter prefix: ${error}`);
  return null;
}
