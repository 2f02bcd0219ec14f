// The OpenAPI parts of retries and limits (tickd-protocol(7) RETRIES AND LIMITS): a rule's
// `retry`, `concurrency` and `rate` members (lib/domain/rule-options.ts reads and writes them),
// and the `attempt` and `retry_at` of a job (lib/http/routes/jobs.ts). Like the rest of the
// document they must stay exactly what the routes read and write; every example is checked
// against its schema.
import { MAX_ATTEMPTS } from '../domain/retry-policy.ts';
import { MAX_RETRY_ON } from '../domain/retry-on.ts';
import { MAX_TAGS, TAG_FORM, TAG_PATTERN } from '../domain/node-tags.ts';
import { MAX_CONCURRENCY, MAX_RATE_LIMIT } from '../domain/rule-options.ts';
import type { JsonValue } from './json.ts';

type Obj = { [key: string]: JsonValue };

const ref = (name: string): Obj => ({ $ref: `#/components/schemas/${name}` });
const closed = (required: readonly string[], properties: Obj, extra: Obj = {}): Obj =>
  ({ type: 'object', required: [...required], properties, additionalProperties: false, ...extra });
const EXACT = 'Written as an exact integer; past 2^53 an IEEE-754 double (JavaScript\'s JSON.parse, many JSON libraries) rounds it, so parse it as a 64-bit integer.';
const duration = (description: string, example: string): Obj =>
  ({ type: 'string', pattern: '^([0-9]{1,19}(ns|us|ms|s|m|h|d))+$', description: `${description} A duration: integers with units ns us ms s m h d, e.g. 30s, 1h30m, 250ms.`, examples: [example] });

// Bounds of lib/domain/retry-policy.ts that it does not export (factor, delays).
const MAX_FACTOR = 100;
const RETRY_DESCRIPTION = 'How a failed execution is tried again: on the failures `on` names; without it on a non-zero exit or a signal, an HTTP 5xx, 429 or 408 or no response, a broker error, a runner that could not run or (cluster mode) no node with the rule\'s tags (`no_node`), and never on another 4xx. Never on a process that cannot be started, nor a job no rule matched. While the job waits for its next attempt its status stays triggered and it carries `retry_at`.';
// A failure class of lib/domain/retry-on.ts: exit, exit:1 to exit:255, signal, 4xx, 5xx, 400 to 599, network, broker, runner.
const RETRY_CLASS_PATTERN = '^(exit|exit:([1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])|signal|4xx|5xx|[45][0-9][0-9]|network|broker|runner)$';

const retryFields = (input: boolean): Obj => ({
  attempts: { type: 'integer', minimum: 1, maximum: MAX_ATTEMPTS, description: 'Runs in all, the first included: 1 means no retry.', examples: [5] },
  backoff: { enum: ['fixed', 'exponential'], ...(input && { default: 'exponential' }), description: 'fixed: every wait is `delay`; exponential: the wait after attempt k is delay x factor^(k-1), at most `max_delay`.' },
  delay: duration(`The wait after the first attempt ends, before the second; each wait is counted from the end of the attempt before it.${input ? ' Required when attempts is more than 1.' : ''}`, '1s'),
  factor: { type: 'number', minimum: 1, maximum: MAX_FACTOR, ...(input && { default: 2 }), description: input ? 'exponential backoff only (refused with fixed).' : 'Present for exponential backoff only.' },
  max_delay: duration(`The longest wait, also for a Retry-After header (HTTP 429 and 503), which replaces a shorter computed wait. At most 7d.${input ? ' Default: 1h, or delay when longer.' : ''}`, '5m'),
  jitter: { type: 'number', minimum: 0, maximum: 1, ...(input && { default: 0 }), description: 'A fraction of each wait by which it is moved, at random, either way (never beyond max_delay).' },
  on: {
    type: 'array', minItems: 1, maxItems: MAX_RETRY_ON, uniqueItems: true,
    items: { type: 'string', pattern: RETRY_CLASS_PATTERN },
    description: 'The failures tried again, the whole list (it replaces the default): `exit` any non-zero exit status, `exit:N` that one (1 to 255), `signal` a process killed by a signal (shell, direct, awf); `4xx`, `5xx` an HTTP status of that class (5xx: any from 500), `NNN` that status (400 to 599); `network` no HTTP response; `broker` an amqp or redis broker error; `runner` a runner that could not run, or in cluster mode no live node with the rule\'s tags (`no_node`). '
      + (input ? 'Absent: exit, signal, 5xx, 408, 429, network, broker, runner. An empty list, an unknown class or one given twice is refused (400).' : 'Present only when set, in the order it was given.'),
    examples: [['5xx', '429', 'network']],
  },
});

export const RULE_OPTION_SCHEMAS: Record<string, Obj> = {
  RetryPolicy: closed(['attempts', 'backoff', 'delay', 'max_delay', 'jitter'], retryFields(false), { description: `${RETRY_DESCRIPTION} Every field is written out.` }),
  RetryPolicyInput: closed(['attempts'], retryFields(true), { description: `${RETRY_DESCRIPTION} An unknown member is refused (400).` }),
  RateLimit: closed(['limit', 'per'], {
    limit: { type: 'integer', minimum: 1, maximum: MAX_RATE_LIMIT, description: 'Executions started at most in any window of `per`.', examples: [10] },
    per: duration('The window\'s length, from 1ms to 1d; the window slides (it is the last `per` before each start).', '1s'),
  }, { description: 'At most `limit` of the rule\'s executions start in any window of `per` (a sliding window); the others wait in the order they came due, their status unchanged. An unknown member is refused (400).' }),
};

/** A rule's optional members: the same in requests (the Input policy) and in responses. */
export function ruleOptionProperties(input: boolean): Obj {
  return {
    retry: ref(input ? 'RetryPolicyInput' : 'RetryPolicy'),
    concurrency: { type: 'integer', minimum: 1, maximum: MAX_CONCURRENCY, description: 'At most this many of the rule\'s executions run at once; the others wait for a place in the order they came due (status unchanged: planned, or triggered when a retry waits).', examples: [4] },
    rate: ref('RateLimit'),
    on: {
      type: 'array', minItems: 1, maxItems: MAX_TAGS, uniqueItems: true,
      items: { type: 'string', pattern: TAG_PATTERN },
      description: `Cluster mode: the node tags a job of the rule needs; it runs only on a node that has every one of them (tickd(8) CLUSTER MODE, "Where jobs run"). When no live node has them all, the job waits up to a bound and then fails with the outcome \`no_node\`. A single daemon runs the rule's jobs as any other. A tag is ${TAG_FORM}. `
        + (input ? 'Absent: any node. An empty list, a tag given twice or not of that form is refused (400).' : 'Present only when set, in the order it was given.'),
      examples: [['db', 'eu']],
    },
  };
}

/** The members retries add to a job. */
export const JOB_RETRY_PROPERTIES: Obj = {
  attempt: { type: 'integer', minimum: 0, description: 'The attempt that runs or ran last: 0 while the job is planned, then 1, and more when its rule\'s retry policy tried again. Always present.' },
  retry_at: { type: 'integer', format: 'int64', description: `Present only while the job waits for its next attempt (status triggered): when that attempt is due, nanoseconds since the Unix epoch. ${EXACT}` },
};

// Examples, shared by the rule and job operations.
export const RETRY_RULE_INPUT = {
  pattern: 'hooks.', runner: { type: 'http', method: 'POST', url: 'https://hooks.example.com/tickd' },
  retry: { attempts: 5, delay: '1s', max_delay: '5m', jitter: 0.2, on: ['5xx', '429', 'network'] }, concurrency: 4, rate: { limit: 10, per: '1s' },
};
export const RETRY_RULE = {
  id: 'hooks.', ...RETRY_RULE_INPUT,
  retry: { attempts: 5, backoff: 'exponential', delay: '1s', factor: 2, max_delay: '5m', jitter: 0.2, on: ['5xx', '429', 'network'] },
};
// Its second attempt failed at 1893484801 s; the third is due two seconds later (delay 1s, factor 2).
export const WAITING_JOB = { id: 'hooks.order.7', status: 'triggered', execution: 1893484800000000000n, attempt: 2, retry_at: 1893484803000000000n };
