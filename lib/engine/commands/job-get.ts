import { notFound } from '../../errors.ts';
import type { Handler } from './context.ts';

export const jobGet: Handler<'job.get'> = (ctx, cmd) => {
  const job = ctx.jobs.get(cmd.id);
  return job === undefined ? notFound('job', cmd.id) : { ok: true, kind: 'job', job };
};
