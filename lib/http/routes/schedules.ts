// /schedules routes (tickd-protocol(7) HTTP INTERFACE; issue 37). A schedule answers as
// {"id", every field of lib/schedule/fields.ts in its order (cron and every both present, the
// unused one null), "next", "fired", "skipped": {"missed", "overlap"}}, nanoseconds as exact
// integers. PUT hands the body's fields to readSchedule (lib/schedule/spec.ts) as JSON gave them,
// so HTTP and TCP refuse exactly the same things; its refusal names the field: 400
// {"error": "<field>: <why>"}. Integers beyond 2^53 in the body are read exactly (body.ts
// exactIntegers), so a `start` copied from an answer stays the same instant.
import type { OccurrenceView, ScheduleView } from '../../domain/schedule.ts';
import { readSchedule, type Schedule } from '../../schedule/spec.ts';
import { scheduleFields } from '../../schedule/fields.ts';
import { exactIntegers, isObject, readJsonBody } from '../body.ts';
import { sendError, sendJson, sendNoContent, type JsonValue } from '../json.ts';
import { pathId } from '../params.ts';
import { intParam, listPage } from '../list-page.ts';
import { perform, type Call, type HttpContext, type Route } from '../route.ts';

export const DEFAULT_NEXT = 5;
export const DEFAULT_OCCURRENCES = 10;
/** The most instants GET /next and entries GET /occurrences answer. */
export const MAX_LISTED = 100;

/** What an answer holds beyond the schedule's own fields: a body sent back as read may carry them. */
const READ_ONLY = new Set(['next', 'fired', 'skipped']);

export function scheduleToJson(view: ScheduleView): JsonValue {
  const { schedule } = view.state;
  const out: Record<string, JsonValue> = { id: schedule.id };
  for (const [name, value] of scheduleFields(schedule)) {
    // Both spec fields always appear, the one not used as null: clients read one shape.
    if (name === 'cron' || name === 'every') {
      out['cron'] = name === 'cron' ? value : null;
      out['every'] = name === 'every' ? value : null;
    } else {
      out[name] = value;
    }
  }
  out['next'] = view.next;
  out['fired'] = view.state.fired;
  out['skipped'] = { missed: view.state.skippedMissed, overlap: view.state.skippedOverlap };
  return out;
}

export function occurrenceToJson(o: OccurrenceView): JsonValue {
  return {
    nominal: o.nominal, job: o.job, outcome: o.outcome,
    ...(o.reason !== undefined && { reason: o.reason }),
    ...(o.from !== undefined && { from: o.from }),
    ...(o.count !== undefined && { count: o.count }),
    ...(o.manual !== undefined && { manual: o.manual }),
  };
}

/** The schedule a PUT body describes (every default filled in), or the message naming the field at fault. */
export function scheduleFromBody(id: string, body: unknown): Schedule | string {
  if (!isObject(body)) return 'request body must be a JSON object';
  // A schedule read with GET may be sent back as is: its id must be this one, and what only
  // an answer holds (next, fired, skipped) is left aside.
  if (body['id'] !== undefined && body['id'] !== id) return 'id: must equal the id in the path';
  // No prototype: a `__proto__` member is then a field like any other (refused as unknown), not the object's prototype.
  const fields: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of Object.entries(body)) if (name !== 'id' && !READ_ONLY.has(name)) fields[name] = value;
  const read = readSchedule(id, fields);
  return 'schedule' in read ? read.schedule : `${read.field}: ${read.error}`;
}

async function putSchedule(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'schedule');
  if (id === null) return;
  const body = await readJsonBody(call.req, undefined, exactIntegers);
  if (!body.ok) return sendError(call.res, body.status, body.message);
  const schedule = scheduleFromBody(id, body.value);
  if (typeof schedule === 'string') return sendError(call.res, 400, schedule);
  const reply = await perform(ctx, call, { op: 'schedule.set', schedule }, 'schedule');
  if (reply !== null) sendJson(call.res, 200, scheduleToJson(reply.schedule));
}

async function getSchedule(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'schedule');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'schedule.get', id }, 'schedule');
  if (reply !== null) sendJson(call.res, 200, scheduleToJson(reply.schedule));
}

async function deleteSchedule(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'schedule');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'schedule.remove', id }, 'done');
  if (reply !== null) sendNoContent(call.res);
}

async function nextOf(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'schedule');
  if (id === null) return;
  const n = intParam(call, 'n', 1, MAX_LISTED, `an integer from 1 to ${MAX_LISTED}`);
  if (n === null) return;
  const reply = await perform(ctx, call, { op: 'schedule.next', id, n: n ?? DEFAULT_NEXT }, 'instants');
  if (reply !== null) sendJson(call.res, 200, { next: reply.instants });
}

async function occurrencesOf(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'schedule');
  if (id === null) return;
  const limit = intParam(call, 'limit', 1, MAX_LISTED, `an integer from 1 to ${MAX_LISTED}`);
  if (limit === null) return;
  const reply = await perform(ctx, call, { op: 'schedule.occurrences', id, limit: limit ?? DEFAULT_OCCURRENCES }, 'occurrences');
  if (reply !== null) sendJson(call.res, 200, { occurrences: reply.occurrences.map(occurrenceToJson) });
}

/** POST /pause and /resume. */
async function setPaused(ctx: HttpContext, call: Call, paused: boolean): Promise<void> {
  const id = pathId(call, 'schedule');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'schedule.pause', id, paused }, 'schedule');
  if (reply !== null) sendJson(call.res, 200, scheduleToJson(reply.schedule));
}

/** POST /run: the schedule, and the job of the manual occurrence it made. */
async function runNow(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'schedule');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'schedule.run', id }, 'schedule');
  if (reply === null) return;
  // Run always makes a job: a reply without one is a broken invariant (onError -> 500).
  if (reply.job === undefined) throw new Error(`schedule.run ${id}: the reply names no job`);
  sendJson(call.res, 200, { ...(scheduleToJson(reply.schedule) as Record<string, JsonValue>), job: reply.job });
}

export function scheduleRoutes(ctx: HttpContext): Route[] {
  return [
    { method: 'GET', path: '/schedules', auth: true, handle: (call) => listPage(ctx, call, 'schedules', scheduleToJson) },
    { method: 'PUT', path: '/schedules/:id', auth: true, handle: (call) => putSchedule(ctx, call) },
    { method: 'GET', path: '/schedules/:id', auth: true, handle: (call) => getSchedule(ctx, call) },
    { method: 'DELETE', path: '/schedules/:id', auth: true, handle: (call) => deleteSchedule(ctx, call) },
    { method: 'GET', path: '/schedules/:id/next', auth: true, handle: (call) => nextOf(ctx, call) },
    { method: 'GET', path: '/schedules/:id/occurrences', auth: true, handle: (call) => occurrencesOf(ctx, call) },
    { method: 'POST', path: '/schedules/:id/pause', auth: true, handle: (call) => setPaused(ctx, call, true) },
    { method: 'POST', path: '/schedules/:id/resume', auth: true, handle: (call) => setPaused(ctx, call, false) },
    { method: 'POST', path: '/schedules/:id/run', auth: true, handle: (call) => runNow(ctx, call) },
  ];
}
