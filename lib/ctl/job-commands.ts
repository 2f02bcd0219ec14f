// `job set`, `job get`, `job ls`, `job rm` (tickd-ctl(1) COMMANDS): SET, GET and ATTEMPTS,
// QUERY, REMOVE.
import type { Job } from '../domain/job.ts';
import { validateIdentifier, validatePattern } from '../domain/identifier.ts';
import type { Client } from '../client/index.ts';
import { expectOk, type Ctx, type Prepare } from './context.ts';
import { ConnectionError, UsageError } from './errors.ts';
import { JOB_DETAIL_HEADER, JOB_HEADER, JsonArrayWriter, TableWriter, jobCells, jobDetailCells, jobDetailJson, jobJson } from './output.ts';
import { parseAttemptLine, parseJobBody, parseJobLine, type Attempt as AttemptLine } from '../client/replies.ts';
import { addrOf, listing, pipelined, single } from './requests.ts';
import { parseWhen } from './when.ts';
import { toJson } from '../http/json.ts';

export function checkId(kind: 'job' | 'rule', id: string): string {
  const bad = validateIdentifier(kind, id);
  if (bad !== null) throw new UsageError(bad);
  return id;
}

export function checkPrefix(prefix: string | undefined): string {
  const p = prefix ?? '';
  const bad = validatePattern(p);
  if (bad !== null) throw new UsageError(bad.replace(/^pattern/, 'prefix'));
  return p;
}

/** One job in the chosen format; `raw` is the daemon's answer line. */
export function printJob(ctx: Ctx, job: Job, raw: string): void {
  if (ctx.format === 'json') ctx.out.write(`${jobJson(job)}\n`);
  else if (ctx.format === 'raw') ctx.out.write(`${raw}\n`);
  else {
    const t = new TableWriter(JOB_HEADER, { statusColumn: 1, color: ctx.color });
    ctx.out.write(t.add(jobCells(job)) + t.end());
  }
}

export const jobSet: Prepare = (args, input) => {
  const id = checkId('job', args[0]!);
  const when = parseWhen(args.slice(1), input.nowNs);
  if ('error' in when) throw new UsageError(when.error);
  return async (ctx) => {
    const client = await ctx.client();
    expectOk(await single(client, `SET ${id} ${when.ns}`));
    printJob(ctx, { id, status: 'planned', execution: when.ns }, 'OK');
    return 0;
  };
};

/** GET: the job, and the answer's value as the daemon wrote it. */
async function fetchJob(client: Client, id: string): Promise<{ job: Job; body: string }> {
  const body = expectOk(await single(client, `GET ${id}`));
  const job = parseJobBody(id, body);
  if (job === null) throw new ConnectionError(`unexpected answer to GET from ${addrOf(client)}: ${JSON.stringify(body)}`);
  return { job, body };
}

/**
 * GET and ATTEMPTS, sent together: one round trip. The two answers are of one moment only as
 * far as nothing changes the job between them (an attempt may end, the job be removed: then
 * ATTEMPTS says not_found, as GET would have).
 */
export const jobGet: Prepare = (args) => {
  const id = checkId('job', args[0]!);
  return async (ctx) => {
    const client = await ctx.client();
    const attempts: AttemptLine[] = [];
    const lines: string[] = [];
    const [{ job, body }, history] = await Promise.all([
      fetchJob(client, id),
      listing(client, `ATTEMPTS ${id}`, parseAttemptLine, (a, rest) => {
        attempts.push(a);
        lines.push(rest);
      }),
    ]);
    expectOk(history);
    if (ctx.format === 'json') ctx.out.write(`${jobDetailJson(job, attempts)}\n`);
    else if (ctx.format === 'raw') ctx.out.write(`OK ${body}\n${lines.map((l) => `${l}\n`).join('')}OK\n`);
    else {
      const t = new TableWriter(JOB_DETAIL_HEADER, { statusColumn: 1, color: ctx.color });
      ctx.out.write(t.add(jobDetailCells(job, attempts)) + t.end());
    }
    return 0;
  };
};

/** Prints a QUERY as it streams: the table, the JSON array or the raw lines. */
async function streamJobs(ctx: Ctx, prefix: string): Promise<void> {
  const client = await ctx.client();
  const table = new TableWriter(JOB_HEADER, { statusColumn: 1, color: ctx.color });
  const json = new JsonArrayWriter();
  const answer = await listing(client, prefix === '' ? 'QUERY' : `QUERY ${prefix}`, parseJobLine, (job, rest) => {
    if (ctx.format === 'json') ctx.out.write(json.add(jobJson(job)));
    else if (ctx.format === 'raw') ctx.out.write(`${rest}\n`);
    else ctx.out.write(table.add(jobCells(job)));
    return !ctx.out.broken;
  });
  expectOk(answer);
  ctx.out.write(ctx.format === 'json' ? json.end() : ctx.format === 'raw' ? 'OK\n' : table.end());
}

export const jobLs: Prepare = (args) => {
  const prefix = checkPrefix(args[0]);
  return async (ctx) => {
    await streamJobs(ctx, prefix);
    return 0;
  };
};

/** `job rm` and `rule rm`: pipelined removals, every failure reported, exit 1 if any. */
export function removals(kind: 'job' | 'rule', instruction: 'REMOVE' | 'REMOVERULE'): Prepare {
  return (args) => {
    const ids = args.map((id) => checkId(kind, id));
    return async (ctx) => {
      const client = await ctx.client();
      const answers = await pipelined(client, ids.map((id) => `${instruction} ${id}`));
      const removed: string[] = [];
      for (const [i, a] of answers.entries()) {
        if (a.ok) {
          removed.push(ids[i]!);
          if (ctx.format === 'raw') ctx.out.write('OK\n');
        } else {
          ctx.warn(`${ids[i]}: ${a.code}${a.message === '' ? '' : `: ${a.message}`}`);
        }
      }
      if (ctx.format === 'json') ctx.out.write(`${toJson({ removed })}\n`);
      return removed.length === ids.length ? 0 : 1;
    };
  };
}

export const jobRm: Prepare = removals('job', 'REMOVE');
