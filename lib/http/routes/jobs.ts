// /jobs routes (tickd-protocol(7) HTTP INTERFACE). A job is {"id","status","execution","attempt"}
// with execution written as the exact integer of nanoseconds, and "retry_at" (the same) while it
// waits for its next attempt (tickd-protocol(7) RETRIES AND LIMITS); requests give execution as
// an ISO 8601 string with a zone. GET /jobs/{id} adds `last_attempt` when the daemon has one
// recorded (doc/execution.md "The attempt record"): nanoseconds exact too; GET
// /jobs/{id}/attempts its last attempts (tickd.toml(5) attempt_history), oldest first; POST
// /jobs/{id}/retry runs a failed job again now (lib/engine/commands/job-retry.ts).
// Identifiers are validated like TCP's before anything reaches the primary.
import type { Attempt, AttemptOutcome } from '../../domain/attempt.ts';
import type { NodeWait } from '../../domain/command.ts';
import { describeOutcome, outcomeSucceeded } from '../../domain/attempt.ts';
import { attemptNumber, type Job } from '../../domain/job.ts';
import { parseIsoTimestamp } from '../../domain/time.ts';
import { isObject, readJsonBody } from '../body.ts';
import { sendError, sendJson, sendNoContent, type JsonValue } from '../json.ts';
import { pathId } from '../params.ts';
import { listPage } from '../list-page.ts';
import { perform, type Call, type HttpContext, type Route } from '../route.ts';

/**
 * `attempt`: the attempt that runs or ran last (0 before the first); `retry_at` only while the
 * job waits for its next attempt (status triggered), exact nanoseconds like execution.
 */
function jobToJson(job: Job): { [key: string]: JsonValue } {
  return { id: job.id, status: job.status, execution: job.execution, attempt: attemptNumber(job), ...(job.retryAt === undefined ? {} : { retry_at: job.retryAt }) };
}

/** The outcome object: `kind` first, then that kind's fields (their names are the JSON's, but for retryAfterMs). */
function outcomeToJson(o: AttemptOutcome): JsonValue {
  if (o.kind === 'http_response' && o.retryAfterMs !== undefined) return { kind: o.kind, status: o.status, retry_after_ms: o.retryAfterMs };
  if (o.kind === 'no_node') return { kind: o.kind, on: [...o.on] };
  return { ...o };
}

export function attemptToJson(a: Attempt): JsonValue {
  return {
    attempt: a.number ?? 1,
    started_ns: a.startedNs,
    lateness_ns: a.latenessNs,
    held_ns: a.heldNs ?? 0n,
    duration_ns: a.durationNs,
    rule: a.rule,
    runner: a.runner,
    // Cluster mode only: a single daemon's attempts have no such member at all.
    ...(a.node === undefined ? {} : { node: a.node }),
    success: outcomeSucceeded(a.outcome),
    summary: describeOutcome(a.outcome),
    outcome: outcomeToJson(a.outcome),
  };
}

function jobDetailToJson(job: Job, attempt: Attempt | undefined, wait: NodeWait | undefined): JsonValue {
  const detail = attempt === undefined ? jobToJson(job) : { ...jobToJson(job), last_attempt: attemptToJson(attempt) };
  return wait === undefined ? detail : { ...(detail as Record<string, JsonValue>), waiting_for_node: { on: [...wait.on], since_ns: wait.sinceNs } };
}

async function putJob(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'job');
  if (id === null) return;
  const body = await readJsonBody(call.req);
  if (!body.ok) return sendError(call.res, body.status, body.message);
  if (!isObject(body.value)) return sendError(call.res, 400, 'request body must be a JSON object');
  const raw = body.value['execution'];
  if (raw === undefined) return sendError(call.res, 400, 'execution is required');
  if (typeof raw !== 'string') return sendError(call.res, 400, 'execution must be an ISO 8601 string with a zone, e.g. "2026-04-10T12:00:00Z"');
  const execution = parseIsoTimestamp(raw);
  if (typeof execution === 'string') return sendError(call.res, 400, `execution: ${execution}`);
  const done = await perform(ctx, call, { op: 'job.set', id, execution }, 'done');
  // SET always leaves the job planned at the given time (tickd-protocol(7) COMMANDS): that is
  // the stored job.
  if (done !== null) sendJson(call.res, 200, jobToJson({ id, execution, status: 'planned' }));
}

async function getJob(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'job');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'job.get', id }, 'job');
  if (reply !== null) sendJson(call.res, 200, jobDetailToJson(reply.job, reply.attempt, reply.waitingForNode));
}

async function getAttempts(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'job');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'job.get', id, history: true }, 'job');
  if (reply !== null) sendJson(call.res, 200, { attempts: (reply.attempts ?? []).map(attemptToJson) });
}

async function retryJob(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'job');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'job.retry', id }, 'job');
  if (reply !== null) sendJson(call.res, 200, jobToJson(reply.job));
}

async function deleteJob(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'job');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'job.remove', id }, 'done');
  if (reply !== null) sendNoContent(call.res);
}

export function jobRoutes(ctx: HttpContext): Route[] {
  return [
    { method: 'GET', path: '/jobs', auth: true, handle: (call) => listPage(ctx, call, 'jobs', jobToJson) },
    { method: 'PUT', path: '/jobs/:id', auth: true, handle: (call) => putJob(ctx, call) },
    { method: 'GET', path: '/jobs/:id', auth: true, handle: (call) => getJob(ctx, call) },
    { method: 'DELETE', path: '/jobs/:id', auth: true, handle: (call) => deleteJob(ctx, call) },
    { method: 'GET', path: '/jobs/:id/attempts', auth: true, handle: (call) => getAttempts(ctx, call) },
    { method: 'POST', path: '/jobs/:id/retry', auth: true, handle: (call) => retryJob(ctx, call) },
  ];
}
