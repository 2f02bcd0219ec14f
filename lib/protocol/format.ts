// The only writer of TCP protocol text (tickd-protocol(7) RESPONSES, COMMANDS and ERRORS).
//
// Invariants:
// - Every line ends with `\n` and contains no other LF or CR, whatever the data: values that
//   could break a line are quoted and escaped, error messages have line breaks blanked.
// - Rule lines can be pasted back as `RULE SET` arguments: each field that is empty or holds a
//   space, a double quote, a backslash or a control character is written in double quotes with
//   `\"` and `\\` escapes (the tokenizer's grammar). Validation keeps CR/LF out of stored rules;
//   should one come from elsewhere (an old logfile) it is written as `\n`/`\r`, which keeps the
//   line intact but does not paste back to the same byte.
// - Lists are built as arrays and joined once per page (lib/domain/page.ts): a page of
//   thousands of jobs is one join, not repeated concatenation of a growing string.
import type { Reply } from '../domain/command.ts';
import { describeOutcome, outcomeSucceeded, type Attempt } from '../domain/attempt.ts';
import type { Job } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import { formatRuleArgs, quoteArg, runnerTokens } from '../domain/arguments.ts';
import type { StatValues } from '../domain/stat.ts';
import { STAT_KEYS } from '../domain/stat.ts';
import { internal, invalidArgs } from '../errors.ts';
import { formatScheduleReply, scheduleLines } from './schedule-format.ts';

export { formatRuleArgs, quoteArg, runnerTokens };

const HAS_LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /[\r\n]/g;

/** Request ids and messages are echoed as text: a CR or LF in them could forge a reply line. */
function oneLine(s: string): string {
  return HAS_LINE_BREAK.test(s) ? s.replace(LINE_BREAKS, ' ') : s;
}

/** A list's entry lines, followed by its terminal `OK` line when `terminal` is set. */
function jobLines(rid: string, jobs: readonly Job[], terminal: boolean): string {
  const lines = new Array<string>(jobs.length + (terminal ? 1 : 0));
  for (let i = 0; i < jobs.length; i++) {
    const j = jobs[i]!;
    lines[i] = `${rid} ${quoteArg(j.id)} ${j.status} ${j.execution}\n`;
  }
  if (terminal) lines[jobs.length] = `${rid} OK\n`;
  return lines.join('');
}

function ruleLines(rid: string, rules: readonly Rule[], terminal: boolean): string {
  const lines = new Array<string>(rules.length + (terminal ? 1 : 0));
  for (let i = 0; i < rules.length; i++) lines[i] = `${rid} ${formatRuleArgs(rules[i]!)}\n`;
  if (terminal) lines[rules.length] = `${rid} OK\n`;
  return lines.join('');
}

/**
 * The entry lines of one page of a listing (no terminal line): a streamed QUERY, LISTRULES or
 * SCHEDULE LIST writes each page as it arrives and its `OK` (formatReply of a 'done' reply)
 * after the last.
 */
export function formatPageLines(requestId: string, page: Extract<Reply, { kind: 'jobs' | 'rules' | 'schedules' }>): string {
  const rid = oneLine(requestId);
  switch (page.kind) {
    case 'jobs': return jobLines(rid, page.jobs, false);
    case 'rules': return ruleLines(rid, page.rules, false);
    case 'schedules': return scheduleLines(rid, page.schedules, false);
  }
}

/**
 * ATTEMPTS: one line per attempt, oldest first, then `OK`. The summary is the one field that
 * is text (an error message may hold anything), so it is quoted as rule fields are.
 */
function attemptLines(rid: string, attempts: readonly Attempt[]): string {
  const lines = new Array<string>(attempts.length + 1);
  for (let i = 0; i < attempts.length; i++) {
    const a = attempts[i]!;
    const result = outcomeSucceeded(a.outcome) ? 'success' : 'failure';
    lines[i] = `${rid} ${a.number ?? 1} ${a.startedNs} ${a.latenessNs} ${a.heldNs ?? 0n} ${a.durationNs} ${result} ${quoteArg(describeOutcome(a.outcome))}\n`;
  }
  lines[attempts.length] = `${rid} OK\n`;
  return lines.join('');
}

function statLines(rid: string, stat: StatValues): string {
  const lines: string[] = [];
  for (const key of STAT_KEYS) lines.push(`${rid} ${key} ${oneLine(String(stat[key]))}\n`);
  lines.push(`${rid} OK\n`);
  return lines.join('');
}

/** The whole response text for one request, every line `\n`-terminated. */
export function formatReply(requestId: string, reply: Reply): string {
  const rid = oneLine(requestId);
  if (!reply.ok) {
    const message = oneLine(reply.message);
    return message === '' ? `${rid} ERROR ${reply.code}\n` : `${rid} ERROR ${reply.code} ${message}\n`;
  }
  switch (reply.kind) {
    case 'done':
      return `${rid} OK\n`;
    case 'job':
      // The history only ATTEMPTS asks for; else the spec's line, where a reply's `attempt`
      // (GET /jobs/{id}'s last_attempt) never shows.
      if (reply.attempts !== undefined) return attemptLines(rid, reply.attempts);
      return `${rid} OK ${reply.job.status} ${reply.job.execution}\n`;
    case 'jobs':
      return jobLines(rid, reply.jobs, true);
    case 'rule':
      // TCP has no single-rule read; shown like a one-rule LISTRULES if it ever is.
      return ruleLines(rid, [reply.rule], true);
    case 'rules':
      return ruleLines(rid, reply.rules, true);
    case 'stat':
      return statLines(rid, reply.stat);
    case 'schedule':
    case 'schedules':
    case 'instants':
    case 'occurrences':
      return formatScheduleReply(rid, reply);
    case 'cluster':
    case 'activity':
    case 'metrics':
      // No TCP instruction asks for these (GET /cluster, /activity, /metrics only). Should one
      // ever arrive it is a broken invariant, answered like any other: a protocol line, never a
      // throw in a session.
      return formatReply(rid, internal());
    default: {
      const never: never = reply;
      return never;
    }
  }
}

export function formatAuthOk(): string {
  return 'OK\n';
}

/** Pre-authentication errors carry no request id and no message (tickd-protocol(7) ERRORS). */
export function formatPreAuthError(code: 'auth_required' | 'auth_failed'): string {
  return `ERROR ${code}\n`;
}

export function formatTooLong(rid: string): string {
  return formatReply(rid, invalidArgs('line too long'));
}
