// Reading the daemon's answers (tickd-protocol(7) RESPONSES, COMMANDS): each function takes one
// reply line with its request id removed. Pure. Rule lines are read with the daemon's own
// tokenizer and runner-form parser, so what LISTRULES writes is read back by the same grammar.
import type { Job, JobStatus } from '../domain/job.ts';
import { JOB_STATUSES } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import { tokenize } from '../protocol/tokenize.ts';
import { parseRunnerArgs, splitRuleOptions } from '../protocol/parse.ts';

export type Answer =
  | { readonly ok: true; readonly body: string }
  | { readonly ok: false; readonly code: string; readonly message: string };

const INTEGER = /^-?\d+$/;

function isStatus(s: string): s is JobStatus {
  return (JOB_STATUSES as readonly string[]).includes(s);
}

/** `OK`, `OK <body>` or `ERROR <code> [message]`; null for anything else. */
export function parseAnswer(rest: string): Answer | null {
  if (rest === 'OK') return { ok: true, body: '' };
  if (rest.startsWith('OK ')) return { ok: true, body: rest.slice(3) };
  if (rest.startsWith('ERROR ')) {
    const sp = rest.indexOf(' ', 6);
    return sp === -1 ? { ok: false, code: rest.slice(6), message: '' } : { ok: false, code: rest.slice(6, sp), message: rest.slice(sp + 1) };
  }
  return null;
}

/** GET's body `<status> <execution_ns>`. */
export function parseJobBody(id: string, body: string): Job | null {
  const parts = body.split(' ');
  if (parts.length !== 2 || !isStatus(parts[0]!) || !INTEGER.test(parts[1]!)) return null;
  return { id, status: parts[0], execution: BigInt(parts[1]!) };
}

/** A QUERY line `<job> <status> <execution_ns>` (a job may be named OK or ERROR: the shape decides). */
export function parseJobLine(rest: string): Job | null {
  const sp = rest.indexOf(' ');
  if (sp <= 0) return null;
  return parseJobBody(rest.slice(0, sp), rest.slice(sp + 1));
}

/** A LISTRULES line `<rule> <pattern> [option=value...] <kind> <runner_args...>`, quoted as the daemon writes it. */
export function parseRuleLine(rest: string): Rule | null {
  const t = tokenize(rest);
  if (t === null || t.length < 3) return null;
  const split = splitRuleOptions(t.slice(2));
  if (typeof split === 'string' || split.rest.length === 0) return null;
  const runner = parseRunnerArgs(split.rest[0]!, split.rest.slice(1));
  if (typeof runner === 'string') return null;
  return split.options === undefined ? { id: t[0]!, pattern: t[1]!, runner } : { id: t[0]!, pattern: t[1]!, runner, options: split.options };
}

/** One ATTEMPTS line: an attempt as the TCP protocol tells it (no rule, runner or outcome object). */
export interface AttemptLine {
  readonly attempt: number;
  readonly startedNs: bigint;
  readonly latenessNs: bigint;
  readonly heldNs: bigint;
  readonly durationNs: bigint;
  readonly success: boolean;
  readonly summary: string;
}

const COUNT = /^[1-9]\d{0,9}$/;

/** An ATTEMPTS line `<attempt> <started_ns> <lateness_ns> <held_ns> <duration_ns> <success|failure> <summary>`. */
export function parseAttemptLine(rest: string): AttemptLine | null {
  const t = tokenize(rest);
  if (t === null || t.length !== 7 || !COUNT.test(t[0]!) || !t.slice(1, 5).every((n) => INTEGER.test(n))) return null;
  if (t[5] !== 'success' && t[5] !== 'failure') return null;
  return {
    attempt: Number(t[0]), startedNs: BigInt(t[1]!), latenessNs: BigInt(t[2]!), heldNs: BigInt(t[3]!), durationNs: BigInt(t[4]!),
    success: t[5] === 'success', summary: t[6]!,
  };
}

/** A STAT line `<key> <value>`. */
export function parseStatLine(rest: string): [string, string] | null {
  const sp = rest.indexOf(' ');
  return sp <= 0 ? null : [rest.slice(0, sp), rest.slice(sp + 1)];
}
