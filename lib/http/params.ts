// Path and query parameters shared by the /jobs and /rules routes. Path ids arrive already
// percent-decoded (polka decodes params when the path holds a '%'; a malformed escape stays
// raw and fails validation on its '%'), then are validated exactly like TCP identifiers.
import { validateIdentifier, validatePattern } from '../domain/identifier.ts';
import { sendError } from './json.ts';
import { queryParam, type Call } from './route.ts';

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
  const prefix = queryParam(call.req, 'prefix');
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
