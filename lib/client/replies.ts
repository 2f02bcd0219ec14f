// Reading the daemon's answers (tickd-protocol(7) RESPONSES, COMMANDS): each function takes one
// reply line with its request id removed and returns null for anything that is not that line.
// Pure.
import { tokenize } from '../protocol/tokenize.ts';

export type JobStatus = 'planned' | 'triggered' | 'executed' | 'failed';

export interface Job {
  readonly id: string;
  readonly status: JobStatus;
  /** When it is (or was) due: nanoseconds since the epoch. */
  readonly execution: bigint;
}

/** One attempt of a job, as ATTEMPTS lists it (nanoseconds throughout). */
export interface Attempt {
  /** 1 for the first run. */
  readonly attempt: number;
  readonly startedNs: bigint;
  readonly latenessNs: bigint;
  readonly heldNs: bigint;
  readonly durationNs: bigint;
  readonly success: boolean;
  /** One line for people, such as `exit status 3`. */
  readonly summary: string;
}

export type Answer =
  | { readonly ok: true; readonly body: string }
  | { readonly ok: false; readonly code: string; readonly message: string };

const INTEGER = /^-?\d{1,19}$/;
const COUNT = /^[1-9]\d{0,9}$/;
const STATUSES: readonly string[] = ['planned', 'triggered', 'executed', 'failed'];

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

/** GET's and RETRY's body `<status> <execution_ns>`. */
export function parseJobBody(id: string, body: string): Job | null {
  const sp = body.indexOf(' ');
  if (sp === -1) return null;
  const status = body.slice(0, sp);
  const ns = body.slice(sp + 1);
  if (!STATUSES.includes(status) || !INTEGER.test(ns)) return null;
  return { id, status: status as JobStatus, execution: BigInt(ns) };
}

/** A QUERY line `<job> <status> <execution_ns>` (a job may be named OK or ERROR: the shape decides). */
export function parseJobLine(rest: string): Job | null {
  const sp = rest.indexOf(' ');
  return sp <= 0 ? null : parseJobBody(rest.slice(0, sp), rest.slice(sp + 1));
}

/** An ATTEMPTS line `<attempt> <started_ns> <lateness_ns> <held_ns> <duration_ns> <success|failure> <summary>`. */
export function parseAttemptLine(rest: string): Attempt | null {
  const t = tokenize(rest);
  if (t === null || t.length !== 7 || !COUNT.test(t[0]!) || !t.slice(1, 5).every((n) => INTEGER.test(n))) return null;
  if (t[5] !== 'success' && t[5] !== 'failure') return null;
  return {
    attempt: Number(t[0]), startedNs: BigInt(t[1]!), latenessNs: BigInt(t[2]!), heldNs: BigInt(t[3]!), durationNs: BigInt(t[4]!),
    success: t[5] === 'success', summary: t[6]!,
  };
}

/** A STAT line `<key> <value>`. */
export function parseStatLine(rest: string): readonly [string, string] | null {
  const sp = rest.indexOf(' ');
  return sp <= 0 ? null : [rest.slice(0, sp), rest.slice(sp + 1)];
}

/** A SCHEDULE NEXT line: one nominal time in nanoseconds. */
export function parseInstantLine(rest: string): bigint | null {
  return INTEGER.test(rest) ? BigInt(rest) : null;
}
