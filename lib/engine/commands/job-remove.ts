// REMOVE: deletes in any status; a running attempt is not killed, its result is ignored. The
// job's last attempt goes with it (a job set again under the same identifier starts afresh).
import { notFound } from '../../errors.ts';
import { DONE, type Handler } from './context.ts';

export const jobRemove: Handler<'job.remove'> = (ctx, cmd) => {
  if (ctx.jobs.get(cmd.id) === undefined) return notFound('job', cmd.id);
  ctx.changes.deleteJob(cmd.id);
  ctx.attempts.delete(cmd.id);
  return DONE;
};
