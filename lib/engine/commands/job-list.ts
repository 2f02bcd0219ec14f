import type { Handler } from './context.ts';

export const jobList: Handler<'job.list'> = (ctx, cmd) => ({ ok: true, kind: 'jobs', jobs: ctx.changes.jobs.list(cmd.prefix, cmd.scope) });
