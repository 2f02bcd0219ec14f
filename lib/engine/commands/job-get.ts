// GET: the job, and beside it its last attempt if one is recorded (GET /jobs/{id} shows it;
// the TCP line leaves it out: lib/protocol/format.ts).
import { notFound } from '../../errors.ts';
import type { Handler } from './context.ts';

export const jobGet: Handler<'job.get'> = (ctx, cmd) => {
  const job = ctx.jobs.get(cmd.id);
  if (job === undefined) return notFound('job', cmd.id);
  if (cmd.history === true) return { ok: true, kind: 'job', job, attempts: ctx.attempts.history(cmd.id) };
  const attempt = ctx.attempts.get(cmd.id);
  const waitingForNode = job.status === 'triggered' ? ctx.waitingForNode(cmd.id) : undefined;
  if (waitingForNode !== undefined) return attempt === undefined ? { ok: true, kind: 'job', job, waitingForNode } : { ok: true, kind: 'job', job, attempt, waitingForNode };
  return attempt === undefined ? { ok: true, kind: 'job', job } : { ok: true, kind: 'job', job, attempt };
};
