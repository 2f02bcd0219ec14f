// Every command of command-list.ts with its implementation. A Record over CommandName: a
// command without an implementation, or one the list lacks, does not compile.
import { jobExport, jobImport } from './bulk.ts';
import type { CommandName } from './command-list.ts';
import { completionScript } from './completion.ts';
import type { Prepare } from './context.ts';
import { helpFor } from './help.ts';
import { jobGet, jobLs, jobRm, jobSet } from './job-commands.ts';
import { jobRetry } from './job-retry.ts';
import { ruleLs, ruleRm, ruleSet } from './rule-commands.ts';
import { schedGet, schedHistory, schedLs, schedNext, schedPause, schedResume, schedRm, schedRun, schedSet } from './schedule-commands.ts';
import { ping, stat } from './server-commands.ts';
import { watch } from './watch.ts';

const completion: Prepare = (args) => {
  const script = completionScript(args[0]!);
  return async (ctx) => {
    ctx.out.write(script);
    return 0;
  };
};

const help: Prepare = (args) => {
  const text = helpFor(args);
  return async (ctx) => {
    ctx.out.write(text);
    return 0;
  };
};

export const PREPARE: Readonly<Record<CommandName, Prepare>> = {
  'job set': jobSet,
  'job get': jobGet,
  'job ls': jobLs,
  'job rm': jobRm,
  'job retry': jobRetry,
  'job import': jobImport,
  'job export': jobExport,
  'rule set': ruleSet,
  'rule ls': ruleLs,
  'rule rm': ruleRm,
  'sched set': schedSet,
  'sched get': schedGet,
  'sched ls': schedLs,
  'sched rm': schedRm,
  'sched next': schedNext,
  'sched pause': schedPause,
  'sched resume': schedResume,
  'sched run': schedRun,
  'sched history': schedHistory,
  stat,
  ping,
  watch,
  completion,
  help,
};
