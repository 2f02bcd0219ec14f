// `job retry ID` (tickd-ctl(1) COMMANDS): RETRY, a failed job run again now, as POST
// /jobs/{id}/retry runs it (lib/engine/commands/job-retry.ts). One instruction, so the daemon
// checks that the job failed and plans it in the same step: nothing another client does can
// slip between the two. A job that is not failed is refused by the daemon, in its words.
//
// RETRY answers `OK` alone, as SET does: the time shown is this machine's now, which the
// daemon's own clock (the one that planned the job) can differ from by the round trip and by
// any skew; `job get` shows the exact time.
import { expectOk, type Prepare } from './context.ts';
import { checkId, printJob } from './job-commands.ts';
import { single } from './requests.ts';

export const jobRetry: Prepare = (args, input) => {
  const id = checkId('job', args[0]!);
  return async (ctx) => {
    expectOk(await single(await ctx.client(), `RETRY ${id}`));
    printJob(ctx, { id, status: 'planned', execution: input.nowNs }, 'OK');
    return 0;
  };
};
