// Turns a tokenized protocol line into a Command, an error reply, an AUTH attempt, or nothing
// (tickd-protocol(7) GRAMMAR, COMMANDS and ERRORS). Pure: no session state.
//
// Rules:
// - `AUTH [secret]` has no request id. A missing or empty secret gives secret null. Tokens
//   after the secret are ignored. (So `AUTH` can never be used as a request id.)
// - Otherwise `<rid> <instruction> <args...>`. Fewer than two tokens, an empty rid, an
//   unknown instruction (case-sensitive), `RULE` not followed by `SET` or `SCHEDULE` not
//   followed by one of its sub-instructions: ignore (no reply).
// - A recognised instruction with missing, extra or malformed arguments: an invalid_args
//   error naming the argument. LISTRULES and STAT ignore trailing arguments (the spec says
//   so); every other instruction rejects them, so a typo never silently changes meaning.
import type { Command } from '../domain/command.ts';
import type { Rule } from '../domain/rule.ts';
import { invalidArgs, type ErrorReply } from '../errors.ts';
import { validateIdentifier, validatePattern } from '../domain/identifier.ts';
import { validateRunner } from '../domain/runner-validate.ts';
import { parseRunnerArgs, quoteForMessage, splitRuleOptions } from '../domain/runner-args.ts';
import { parseTcpTimestamp } from '../domain/time.ts';
import { TCP_PAGE_ENTRIES } from '../domain/page.ts';
import { readSchedule } from '../schedule/spec.ts';

export type ParsedLine =
  | { readonly kind: 'auth'; readonly secret: string | null }
  | { readonly kind: 'command'; readonly rid: string; readonly cmd: Command }
  | { readonly kind: 'error'; readonly rid: string; readonly reply: ErrorReply }
  | { readonly kind: 'ignore' };

const IGNORE: ParsedLine = { kind: 'ignore' };

type Outcome = Command | string;

export function parseLine(tokens: readonly string[]): ParsedLine {
  if (tokens[0] === 'AUTH') {
    const secret = tokens[1];
    return { kind: 'auth', secret: secret === undefined || secret === '' ? null : secret };
  }
  if (tokens.length < 2 || tokens[0] === '') return IGNORE;
  const rid = tokens[0]!;
  const outcome = parseInstruction(tokens[1]!, tokens.slice(2));
  if (outcome === null) return IGNORE;
  if (typeof outcome === 'string') return { kind: 'error', rid, reply: invalidArgs(outcome) };
  return { kind: 'command', rid, cmd: outcome };
}

/** null: not an instruction we know (ignored). */
function parseInstruction(instruction: string, args: readonly string[]): Outcome | null {
  switch (instruction) {
    case 'SET':
      return parseSet(args);
    case 'GET':
      return oneId('job', args, (id) => ({ op: 'job.get', id }));
    case 'REMOVE':
      return oneId('job', args, (id) => ({ op: 'job.remove', id }));
    case 'ATTEMPTS':
      return oneId('job', args, (id) => ({ op: 'job.get', id, history: true }));
    case 'RETRY':
      return oneId('job', args, (id) => ({ op: 'job.retry', id }));
    case 'REMOVERULE':
      return oneId('rule', args, (id) => ({ op: 'rule.remove', id }));
    case 'QUERY':
      return parseQuery(args);
    case 'LISTRULES':
      return { op: 'rule.list', prefix: '', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES };
    case 'STAT':
      return { op: 'stat' };
    case 'RULE':
      return args[0] === 'SET' ? parseRuleSet(args.slice(1)) : null;
    case 'SCHEDULE':
      return parseSchedule(args[0] ?? '', args.slice(1));
    default:
      return null;
  }
}

function oneId(kind: 'job' | 'rule', args: readonly string[], make: (id: string) => Command): Outcome {
  if (args.length === 0) return `missing ${kind} identifier`;
  const bad = validateIdentifier(kind, args[0]!);
  if (bad !== null) return bad;
  if (args.length > 1) return `unexpected argument ${quoteForMessage(args[1]!)} after the ${kind} identifier`;
  return make(args[0]!);
}

function parseSet(args: readonly string[]): Outcome {
  if (args.length === 0) return 'missing job identifier';
  const bad = validateIdentifier('job', args[0]!);
  if (bad !== null) return bad;
  const ts = parseTcpTimestamp(args.slice(1));
  if ('error' in ts) return `invalid timestamp: ${ts.error}`;
  return { op: 'job.set', id: args[0]!, execution: ts.ns };
}

function parseQuery(args: readonly string[]): Outcome {
  const prefix = args[0] ?? '';
  const bad = validatePattern(prefix);
  if (bad !== null) return bad;
  if (args.length > 1) return `unexpected argument ${quoteForMessage(args[1]!)} after the pattern`;
  return { op: 'job.list', prefix, scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES };
}

/**
 * `SCHEDULE <sub> ...` (tickd-protocol(7) SCHEDULES), by sub-instruction; one not here makes
 * the line an unknown instruction, as `RULE` without `SET` is. (A table, not a switch: the
 * manual's check reads this file's `case` labels as the top-level instructions.)
 */
const SCHEDULE_PARSERS: Readonly<Record<string, (args: readonly string[]) => Outcome>> = {
  SET: (args) => parseScheduleSet(args),
  GET: (args) => scheduleId(args, 0, (id) => ({ op: 'schedule.get', id })),
  REMOVE: (args) => scheduleId(args, 0, (id) => ({ op: 'schedule.remove', id })),
  PAUSE: (args) => scheduleId(args, 0, (id) => ({ op: 'schedule.pause', id, paused: true })),
  RESUME: (args) => scheduleId(args, 0, (id) => ({ op: 'schedule.pause', id, paused: false })),
  RUN: (args) => scheduleId(args, 0, (id) => ({ op: 'schedule.run', id })),
  NEXT: (args) => scheduleId(args, 1, (id, n) => ({ op: 'schedule.next', id, n: n ?? DEFAULT_NEXT })),
  HISTORY: (args) => scheduleId(args, 1, (id, n) => ({ op: 'schedule.occurrences', id, limit: n ?? DEFAULT_HISTORY })),
  LIST: (args) => {
    const prefix = args[0] ?? '';
    const bad = validatePattern(prefix);
    if (bad !== null) return bad;
    if (args.length > 1) return `unexpected argument ${quoteForMessage(args[1]!)} after the pattern`;
    return { op: 'schedule.list', prefix, scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES };
  },
};

/** null for a sub-instruction we do not know (the line is ignored). */
function parseSchedule(sub: string, args: readonly string[]): Outcome | null {
  return Object.hasOwn(SCHEDULE_PARSERS, sub) ? SCHEDULE_PARSERS[sub]!(args) : null;
}

/** What NEXT and HISTORY answer when not told how many. */
export const DEFAULT_NEXT = 5;
export const DEFAULT_HISTORY = 10;
/** The most instants NEXT, and entries HISTORY, answer. */
export const MAX_SCHEDULE_COUNT = 100;

const badScheduleId = (s: string): string | null => validateIdentifier('job', s)?.replace('job identifier', 'schedule identifier') ?? null;

/** A schedule identifier, then up to `counts` optional counts (1..MAX_SCHEDULE_COUNT), then nothing. */
function scheduleId(args: readonly string[], counts: 0 | 1, make: (id: string, n: number | undefined) => Command): Outcome {
  if (args.length === 0) return 'missing schedule identifier';
  const bad = badScheduleId(args[0]!);
  if (bad !== null) return bad;
  let n: number | undefined;
  if (counts === 1 && args.length > 1) {
    const text = args[1]!;
    n = /^[0-9]{1,3}$/.test(text) ? Number(text) : NaN;
    if (!(n >= 1 && n <= MAX_SCHEDULE_COUNT)) return `count must be an integer from 1 to ${MAX_SCHEDULE_COUNT}, not ${quoteForMessage(text)}`;
  }
  const extra = args[1 + counts];
  if (extra !== undefined) return `unexpected argument ${quoteForMessage(extra)} after the ${counts === 0 ? 'schedule identifier' : 'count'}`;
  return make(args[0]!, n);
}

/**
 * `SCHEDULE SET <id> <key=value>...`: each option is one field of the HTTP body, its value the
 * text after the first `=` (quote the whole token when the value has spaces). readSchedule
 * says what each field may hold; a refusal names the field: `cron: ...`.
 */
function parseScheduleSet(args: readonly string[]): Outcome {
  if (args.length === 0) return 'missing schedule identifier';
  const bad = badScheduleId(args[0]!);
  if (bad !== null) return bad;
  // No prototype: `__proto__=x` is a field like any other (refused as unknown), never a setter.
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const token of args.slice(1)) {
    const eq = token.indexOf('=');
    if (eq <= 0) return `expected key=value, not ${quoteForMessage(token)}`;
    const key = token.slice(0, eq);
    if (Object.hasOwn(fields, key)) return `${fieldName(key)}: given twice`;
    fields[key] = token.slice(eq + 1);
  }
  const read = readSchedule(args[0]!, fields);
  if ('schedule' in read) return { op: 'schedule.set', schedule: read.schedule };
  // The identifier's refusals already say "schedule identifier".
  return read.field === 'id' ? read.error : `${fieldName(read.field)}: ${read.error}`;
}

/** A field as an error names it: bare when it is a plain word, else quoted (it is the client's text). */
function fieldName(key: string): string {
  return /^[a-z_]{1,32}$/.test(key) ? key : quoteForMessage(key);
}

function parseRuleSet(args: readonly string[]): Outcome {
  const rule = parseRuleArgs(args);
  return typeof rule === 'string' ? rule : { op: 'rule.set', rule };
}

/**
 * `<id> <pattern> [option=value ...] <kind> <runner args...>`: the rule RULE SET's arguments
 * describe, validated, or the message of its first fault. `tickd ctl rule set` reads its words
 * with it, so both refuse the same rules in the same words.
 */
export function parseRuleArgs(args: readonly string[]): Rule | string {
  const [id, pattern] = args;
  if (id === undefined) return 'missing rule identifier';
  const badId = validateIdentifier('rule', id);
  if (badId !== null) return badId;
  if (pattern === undefined) return 'missing pattern';
  const badPattern = validatePattern(pattern);
  if (badPattern !== null) return badPattern;
  const split = splitRuleOptions(args.slice(2));
  if (typeof split === 'string') return split;
  const [type, ...runnerArgs] = split.rest;
  if (type === undefined) return 'missing runner type';
  const runner = parseRunnerArgs(type, runnerArgs);
  if (typeof runner === 'string') return runner;
  const badRunner = validateRunner(runner);
  if (badRunner !== null) return badRunner;
  // No options: the rule of today, without an `options` member at all (never {}).
  return split.options === undefined ? { id, pattern, runner } : { id, pattern, runner, options: split.options };
}
