import type { Handler } from './context.ts';

/** One page per command (lib/domain/page.ts): the primary never builds a whole large listing. */
export const jobList: Handler<'job.list'> = (ctx, cmd) => {
  const page = ctx.jobs.page(cmd.prefix, cmd.scope, cmd.cursor, cmd.limit);
  return { ok: true, kind: 'jobs', jobs: page.items, next: page.next };
};
