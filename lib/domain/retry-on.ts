// Which failed outcomes a retry policy tries again (issue 38, `retry.on`;
// tickd-protocol(7) RETRIES AND LIMITS): a list of failure classes, each naming outcomes of
// attempt.ts.
//
//   exit      any non-zero exit status (shell, direct, awf)   exit:N   that status, 1 to 255
//   signal    the process was killed by a signal
//   4xx, 5xx  an HTTP response of that class                  NNN      that status, 400 to 599
//   network   no HTTP response; broker: a broker's error; runner: a runner that could not run,
//             or (cluster mode) no live node with the rule's tags to run it (no_node)
//
// A process that could not be started, a job no rule matched, a success and an attempt the
// daemon's stop cut short are in no class: they are never retried, whatever the list says.
// Without `on` the policy retries DEFAULT_RETRY_ON, what tickd retried before `on` existed.
//
// Invariants: a list read here holds 1 to MAX_RETRY_ON classes, none twice, in the order it
// was given (so what LISTRULES and GET /rules write is what was set); retryClassText writes
// each as the one text readRetryOn reads back to the same class.
import type { AttemptOutcome } from './attempt.ts';

/** The kinds of class; their index is the kind's byte in the logfile (retry-codec.ts): append only. */
export const RETRY_CLASS_KINDS = ['exit', 'exit_status', 'signal', '4xx', '5xx', 'http_status', 'network', 'broker', 'runner'] as const;
export type RetryClassKind = (typeof RETRY_CLASS_KINDS)[number];

export interface RetryClass {
  readonly kind: RetryClassKind;
  /** exit_status: the exit status (1 to 255); http_status: the HTTP status (400 to 599); 0 for the other kinds. */
  readonly value: number;
}

export const MAX_RETRY_ON = 32;
const EXIT_STATUS = { min: 1, max: 255 } as const;
const HTTP_STATUS = { min: 400, max: 599 } as const;
/** The classes without a value, by their text (which is their kind). */
const PLAIN: readonly RetryClassKind[] = ['exit', 'signal', '4xx', '5xx', 'network', 'broker', 'runner'];
export const RETRY_CLASS_FORMS = 'exit, exit:N (1 to 255), signal, 4xx, 5xx, NNN (400 to 599), network, broker, runner';

const plain = (kind: RetryClassKind): RetryClass => ({ kind, value: 0 });

/** What a policy without `on` retries: exit, signal, 5xx, 408, 429, network, broker, runner. */
export const DEFAULT_RETRY_ON: readonly RetryClass[] = [
  plain('exit'), plain('signal'), plain('5xx'), { kind: 'http_status', value: 408 }, { kind: 'http_status', value: 429 },
  plain('network'), plain('broker'), plain('runner'),
];

/** The class's text: `5xx`, `exit:75`, `404`. */
export function retryClassText(c: RetryClass): string {
  switch (c.kind) {
    case 'exit_status': return `exit:${c.value}`;
    case 'http_status': return String(c.value);
    default: return c.kind;
  }
}

/** Why `c` is no class (a kind unknown, a value out of its range or given to a kind without one), or null. */
export function retryClassError(c: RetryClass): string | null {
  if (!(RETRY_CLASS_KINDS as readonly string[]).includes(c.kind)) return `unknown failure class kind ${String(c.kind)}`;
  if (c.kind === 'exit_status') return inRange(c.value, EXIT_STATUS) ? null : `exit:${c.value}: an exit status is from ${EXIT_STATUS.min} to ${EXIT_STATUS.max}`;
  if (c.kind === 'http_status') return inRange(c.value, HTTP_STATUS) ? null : `${c.value}: an HTTP status here is from ${HTTP_STATUS.min} to ${HTTP_STATUS.max}`;
  return c.value === 0 ? null : `${c.kind} takes no value (${c.value})`;
}

const inRange = (v: number, r: { readonly min: number; readonly max: number }): boolean => Number.isInteger(v) && v >= r.min && v <= r.max;

/**
 * The classes of an HTTP `on` array (or RULE SET's `retry.on`, split at its commas), or why it
 * is refused. Texts are exact: lowercase, no leading zero, no space.
 */
export function readRetryOn(v: unknown): readonly RetryClass[] | string {
  if (!Array.isArray(v)) return `must be a list of failure classes (${RETRY_CLASS_FORMS})`;
  if (v.length === 0) return 'must name at least one failure class';
  if (v.length > MAX_RETRY_ON) return `names at most ${MAX_RETRY_ON} failure classes`;
  const out: RetryClass[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of v.entries()) {
    if (typeof entry !== 'string') return `entry ${i + 1} is not a string`;
    const c = readClass(entry);
    if (c === null) return `${label(entry, i)} is not a failure class (known: ${RETRY_CLASS_FORMS})`;
    const wrong = retryClassError(c);
    if (wrong !== null) return wrong;
    if (seen.has(entry)) return `${entry} is given twice`;
    seen.add(entry);
    out.push(c);
  }
  return out;
}

/** The class `text` names (its value unchecked), or null when it has none of the forms. */
function readClass(text: string): RetryClass | null {
  if ((PLAIN as readonly string[]).includes(text)) return plain(text as RetryClassKind);
  const exit = /^exit:([1-9][0-9]{0,2}|0)$/.exec(text);
  if (exit !== null) return { kind: 'exit_status', value: Number(exit[1]) };
  if (/^([1-9][0-9]{2}|0)$/.test(text)) return { kind: 'http_status', value: Number(text) };
  return null;
}

/** An entry as an error names it: itself when it is a short plain word, else its position. */
function label(entry: string, i: number): string {
  return /^[A-Za-z0-9:._-]{1,16}$/.test(entry) ? entry : `entry ${i + 1}`;
}

/** Whether the outcome `o` is in one of the classes `on`. */
export function inRetryClasses(on: readonly RetryClass[], o: AttemptOutcome): boolean {
  return on.some((c) => covers(c, o));
}

function covers(c: RetryClass, o: AttemptOutcome): boolean {
  switch (c.kind) {
    case 'exit': return o.kind === 'exit' && o.status !== 0;
    case 'exit_status': return o.kind === 'exit' && o.status === c.value;
    case 'signal': return o.kind === 'signal';
    case '4xx': return o.kind === 'http_response' && o.status >= 400 && o.status <= 499;
    // Any status from 500: a server may send a three-digit status above 599, which HTTP gives
    // no class, and it is a server's failure as much as a 5xx (what tickd always retried).
    case '5xx': return o.kind === 'http_response' && o.status >= 500;
    case 'http_status': return o.kind === 'http_response' && o.status === c.value;
    case 'network': return o.kind === 'network_error';
    case 'broker': return o.kind === 'broker_error';
    // A job no node could take failed without running, as a runner that could not run did:
    // the next attempt may find a node (one back, or a new one with the tags).
    case 'runner': return o.kind === 'runner_error' || o.kind === 'no_node';
    default: {
      const never: never = c.kind;
      return never;
    }
  }
}
