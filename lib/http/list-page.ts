// GET /jobs, GET /rules and GET /schedules, paged (lib/domain/page.ts). `limit` (1..10000,
// default 1000) bounds the entries of one response and an opaque `cursor` continues a listing;
// the body of /jobs and /rules is the JSON array of the page's entries, that of /schedules
// {"schedules": [...]} (the shape issue 37's HTTP contract fixed), and while more may follow,
// a `Link: <…>; rel="next"` header gives the URL of the next page (RFC 8288, as GitHub's API
// does). A page is full unless it is the last: the primary examines a bounded number of
// records per request, so this asks it for more until `limit` entries are found or the
// listing ends. GET /jobs also takes
// `status` (params.ts statusParam), filtered by the primary as it walks; the Link header
// repeats every filter, so following it continues the same listing.
import type { ListCommand } from '../domain/command.ts';
import { MAX_CURSOR, MAX_PAGE_ENTRIES } from '../domain/page.ts';
import { sendError, sendJson, type JsonValue } from './json.ts';
import { prefixParam, queryParam, statusParam } from './params.ts';
import { perform, type Call, type HttpContext, type SuccessOf } from './route.ts';

export const DEFAULT_PAGE_ENTRIES = 1000;

const DIGITS = /^[0-9]{1,10}$/;

/** A non-negative integer query parameter no larger than `max`; undefined when absent; null after a 400. */
export function intParam(call: Call, name: string, min: number, max: number, what: string): number | undefined | null {
  const raw = queryParam(call, name);
  if (raw === undefined) return undefined;
  const n = raw !== null && DIGITS.test(raw) ? Number(raw) : NaN;
  if (n >= min && n <= max) return n;
  sendError(call.res, 400, `query parameter ${name} must be ${what}`);
  return null;
}

type Kind = 'jobs' | 'rules' | 'schedules';

export async function listPage<T>(
  ctx: HttpContext, call: Call, kind: Kind, toJson: (item: T) => JsonValue,
): Promise<void> {
  const prefix = prefixParam(call);
  if (prefix === null) return;
  // Rules have no status: /rules ignores the parameter like any other unknown one.
  const statuses = kind === 'jobs' ? statusParam(call) : undefined;
  if (statuses === null) return;
  const limit = intParam(call, 'limit', 1, MAX_PAGE_ENTRIES, `an integer from 1 to ${MAX_PAGE_ENTRIES}`);
  if (limit === null) return;
  const cursor = intParam(call, 'cursor', 0, MAX_CURSOR, 'a cursor from a Link header');
  if (cursor === null) return;
  const want = limit ?? DEFAULT_PAGE_ENTRIES;
  const out: JsonValue[] = [];
  let next: number | null = cursor ?? 0;
  while (next !== null && out.length < want) {
    const base: Omit<ListCommand, 'op'> = { prefix, scope: '', cursor: next, limit: want - out.length };
    const cmd: ListCommand = kind === 'rules' ? { op: 'rule.list', ...base }
      : kind === 'schedules' ? { op: 'schedule.list', ...base }
        : statuses === undefined ? { op: 'job.list', ...base } : { op: 'job.list', ...base, statuses };
    const reply: SuccessOf<Kind> | null = await perform(ctx, call, cmd, kind);
    if (reply === null) return;
    const items = (reply.kind === 'jobs' ? reply.jobs : reply.kind === 'rules' ? reply.rules : reply.schedules) as T[];
    for (const item of items) out.push(toJson(item));
    // Cursors only move forward; anything else is a broken invariant (onError -> 500), not a loop.
    if (reply.next !== null && !(reply.next > next)) throw new Error(`${cmd.op}: cursor ${String(reply.next)} does not advance from ${next}`);
    next = reply.next;
  }
  const headers: Record<string, string> = {};
  if (next !== null) {
    const query = new URLSearchParams({
      ...(prefix === '' ? {} : { prefix }), ...(statuses !== undefined && { status: statuses.join(',') }), limit: String(want), cursor: String(next),
    });
    // Only `status` can hold a comma (prefixes cannot): leave it readable, as RFC 3986 allows in a query.
    headers['Link'] = `</${kind}?${query.toString().replaceAll('%2C', ',')}>; rel="next"`;
  }
  sendJson(call.res, 200, kind === 'schedules' ? { schedules: out } : out, headers);
}
