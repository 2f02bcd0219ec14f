// Path and query parameters of the /jobs, /rules and /schedules routes. Path ids arrive already
// percent-decoded (polka decodes params when the path holds a '%'; a malformed escape stays
// raw and fails validation on its '%'), then are validated exactly like TCP identifiers.
import { validateIdentifier, validatePattern } from '../domain/identifier.ts';
import { isJobStatus, JOB_STATUSES, type JobStatus } from '../domain/job.ts';
import { sendError } from './json.ts';
import type { Call } from './route.ts';

/** The single value of a query parameter: undefined when absent, null when repeated. */
export function queryParam(call: Call, name: string): string | undefined | null {
  const v: unknown = (call.req.query as Record<string, unknown>)[name];
  if (v === undefined || typeof v === 'string') return v;
  return null;
}

/** The path id, validated; null after a 400 has been sent. */
export function pathId(call: Call, kind: 'job' | 'rule' | 'schedule'): string | null {
  const id = call.req.params['id'] ?? '';
  // A schedule identifier has a job identifier's grammar (lib/schedule/spec.ts).
  const error = kind === 'schedule'
    ? validateIdentifier('job', id)?.replace('job identifier', 'schedule identifier') ?? null
    : validateIdentifier(kind, id);
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

/** What a bad `status` shows of the value at fault, at most (the rest is the client's own text). */
const SHOWN_STATUS_CHARS = 40;

/**
 * The optional `status` query parameter of GET /jobs: one status or several separated by
 * commas (`executed,failed`), exact lower-case names. Returns them in JOB_STATUSES order
 * without repeats (so the Link header is the same whatever order the client gave), undefined
 * when absent (any status), null after a 400 has been sent. A repeated parameter is refused
 * like a repeated prefix: one way to name a set is enough.
 */
export function statusParam(call: Call): JobStatus[] | undefined | null {
  const raw = queryParam(call, 'status');
  if (raw === undefined) return undefined;
  if (raw === null) {
    sendError(call.res, 400, 'query parameter status must be given at most once; name several statuses separated by commas');
    return null;
  }
  const names = raw.split(',');
  const bad = names.find((n) => !isJobStatus(n));
  if (bad === undefined) return JOB_STATUSES.filter((s) => names.includes(s));
  const shown = bad.length > SHOWN_STATUS_CHARS ? `${bad.slice(0, SHOWN_STATUS_CHARS)}…` : bad;
  sendError(call.res, 400, `query parameter status: unknown status "${shown}" (allowed: ${JOB_STATUSES.join(', ')}, several separated by commas)`);
  return null;
}
