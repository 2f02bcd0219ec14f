// SET: create or replace; always `planned` at the new time, whatever the old status. A running
// attempt is orphaned (its result is ignored) because Changes.putJob clears the attempt.
import { DONE, type Handler } from './context.ts';

export const jobSet: Handler<'job.set'> = (ctx, cmd) => {
  ctx.changes.putJob({ id: cmd.id, execution: cmd.execution, status: 'planned' });
  return DONE;
};
