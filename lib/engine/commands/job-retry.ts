// POST /jobs/{id}/retry (issue 38): a failed job runs again now, its attempts afresh (its
// retry policy's attempts all over again). Its time becomes now, so its executions carry new
// keys (lib/runner/execution-key.ts): a receiver that deduplicates does not take the run for
// the failed one. Only a failed job: one planned, running or waiting for its next attempt is
// on its way already, and an executed one succeeded (SET it to run it again). Its attempt
// history stays, to be read beside the new attempts.
import { wallNowNs } from '../../clock.ts';
import { invalidArgs, notFound } from '../../errors.ts';
import type { Handler } from './context.ts';

export const jobRetry: Handler<'job.retry'> = (ctx, cmd) => {
  const job = ctx.jobs.get(cmd.id);
  if (job === undefined) return notFound('job', cmd.id);
  if (job.status !== 'failed') return invalidArgs(`job "${cmd.id}" is ${job.retryAt === undefined ? job.status : 'waiting for its next attempt'}: only a failed job is run again`);
  const again = { id: job.id, execution: wallNowNs(), status: 'planned' as const };
  ctx.changes.putJob(again);
  return { ok: true, kind: 'job', job: again };
};
