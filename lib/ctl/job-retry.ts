// `job retry ID` (tickd-ctl(1) COMMANDS): RETRY, a failed job run again now, as POST
// /jobs/{id}/retry runs it (lib/engine/commands/job-retry.ts). One instruction, so the daemon
// checks that the job failed and plans it in the same step: nothing another client does can
// slip between the two. A job that is not failed is refused by the daemon, in its words.
//
// RETRY answers as GET does, `OK planned <ns>`: the time the daemon planned it at, by its clock.
import { expectOk, type Prepare } from './context.ts';
import { ConnectionError } from './errors.ts';
import { checkId, printJob } from './job-commands.ts';
import { parseJobBody } from '../client/replies.ts';
import { addrOf, single } from './requests.ts';

export const jobRetry: Prepare = (args) => {
  const id = checkId('job', args[0]!);
  return async (ctx) => {
    const client = await ctx.client();
    const body = expectOk(await single(client, `RETRY ${id}`));
    const job = parseJobBody(id, body);
    if (job === null) throw new ConnectionError(`unexpected answer to RETRY from ${addrOf(client)}: ${JSON.stringify(body)}`);
    printJob(ctx, job, `OK ${body}`);
    return 0;
  };
};
