// The OpenAPI parts of what the daemon tells about executions (in the manual:
// tickd-protocol(7) HTTP INTERFACE): the `last_attempt` GET /jobs/{id} adds to a job,
// GET /activity and GET /metrics.
// lib/http/openapi.ts puts them in the document; like the rest of it, they must stay exactly
// what the routes write (routes/jobs.ts attemptToJson, routes/observe.ts), and every example is
// checked against its schema.
import { JOB_STATUSES } from '../domain/job.ts';
import { MAX_OUTCOME_TEXT_BYTES, OUTCOME_KINDS, type OutcomeKind } from '../domain/attempt.ts';
import { RUNNER_TYPES } from '../domain/runner-spec.ts';
import type { JsonValue } from './json.ts';
import { JOB_RETRY_PROPERTIES } from './openapi-rule-options.ts';

type Obj = { [key: string]: JsonValue };

const ref = (name: string): Obj => ({ $ref: `#/components/schemas/${name}` });
const closed = (required: readonly string[], properties: Obj, extra: Obj = {}): Obj =>
  ({ type: 'object', required: [...required], properties, additionalProperties: false, ...extra });
const EXACT = 'Written as an exact integer; past 2^53 an IEEE-754 double (JavaScript\'s JSON.parse, many JSON libraries) rounds it, so parse it as a 64-bit integer.';
const ns = (what: string): Obj => ({ type: 'integer', format: 'int64', description: `${what} ${EXACT}` });
const text = (what: string): Obj => ({ type: 'string', description: `${what} At most ${MAX_OUTCOME_TEXT_BYTES} bytes of UTF-8.` });

/** Outcome fields present only sometimes; every other one is always there. */
const OPTIONAL_FIELDS: ReadonlySet<string> = new Set(['retry_after_ms']);

/** One schema per outcome kind, named Outcome<Kind>. */
const OUTCOMES: Readonly<Record<OutcomeKind, readonly [string, Obj]>> = {
  exit: ['The process (shell, direct, awf) exited; success is status 0.', {
    status: { type: 'integer', description: 'The exit status.' },
    stderr: text('The end of what the process wrote to stderr (empty if nothing).'),
  }],
  signal: ['The process was killed by a signal.', {
    signal: { type: 'string', description: 'The signal\'s name, e.g. SIGKILL.' },
    stderr: text('The end of what the process wrote to stderr.'),
  }],
  spawn_error: ['The process could not be started (ENOENT, EACCES, ...).', { error: text('The error.') }],
  http_response: ['The http runner got a response; success is a 2xx status (redirects are not followed).', {
    status: { type: 'integer', minimum: 100, maximum: 999, description: 'The HTTP status.' },
    retry_after_ms: { type: 'integer', minimum: 0, description: 'A 429 or 503 only, and only with a readable Retry-After header: the wait it asked for, in milliseconds from the response (an HTTP-date already past: 0).' },
  }],
  network_error: ['The http runner got no response: refused, reset, DNS, TLS, a connect or read timeout.', { error: text('The error.') }],
  delivered: ['amqp: the broker confirmed the message; redis: the command was answered without error.', {}],
  broker_error: ['amqp or redis: the connection failed, the broker refused or answered an error, or did not answer in time.', { error: text('The broker\'s or the connection\'s error, scrubbed of the password.') }],
  runner_error: ['The runner could not run at all (a URL or DSN an old logfile stored, a defect), or the runner process holding the attempt exited while it ran.', { error: text('What stood in the way.') }],
  no_rule: ['The job came due and no rule matched it: it failed without running.', {}],
  no_node: ['Cluster mode: no live node had every tag the rule requires within the placement bound (tickd(8) CLUSTER MODE, "Where jobs run"): it failed without running. Retried as `runner` failures are.', {
    on: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'The tags the rule required (its `on`).' },
  }],
  aborted: ['The daemon stopped while the runner ran: the job stayed triggered and runs again at the next start.', {}],
};

const outcomeName = (kind: OutcomeKind): string =>
  `Outcome${kind.split('_').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}`;

const outcomeSchemas: Record<string, Obj> = Object.fromEntries(OUTCOME_KINDS.map((kind) => {
  const [description, fields] = OUTCOMES[kind];
  return [outcomeName(kind), closed(['kind', ...Object.keys(fields).filter((f) => !OPTIONAL_FIELDS.has(f))], { kind: { const: kind }, ...fields }, { description })];
}));

export const OBSERVE_SCHEMAS: Record<string, Obj> = {
  JobDetail: closed(['id', 'status', 'execution', 'attempt'], {
    id: ref('Identifier'),
    status: { enum: [...JOB_STATUSES] },
    execution: ns('Nanoseconds since the Unix epoch.'),
    ...JOB_RETRY_PROPERTIES,
    last_attempt: ref('Attempt'),
    waiting_for_node: closed(['on', 'since_ns'], {
      on: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'The tags its rule requires (`on`).' },
      since_ns: ns('Since when it waits, nanoseconds since the Unix epoch.'),
    }, { description: 'Cluster mode: the job\'s attempt waits for a live node having every tag its rule requires; after placement_wait seconds it fails with outcome no_node (tickd(8) CLUSTER MODE, "Where jobs run").' }),
  }, { description: 'A job, and its last attempt when the daemon has one recorded (absent for a job that has not run since it was set, nor since the daemon started).' }),
  Attempt: closed(['attempt', 'started_ns', 'lateness_ns', 'held_ns', 'duration_ns', 'rule', 'runner', 'success', 'summary', 'outcome'], {
    attempt: { type: 'integer', minimum: 1, description: 'The attempt\'s number: 1 for the first run, more when the rule\'s retry policy tried again.' },
    started_ns: ns('When the runner started (a job no rule matched: when it came due and failed), nanoseconds since the Unix epoch.'),
    lateness_ns: ns('How late the runner started: started_ns minus when the attempt was due (the job\'s execution time, or for a retry its retry_at) and minus held_ns, in nanoseconds (the firing plus any wait for an execution slot).'),
    held_ns: ns('How long the attempt waited for its rule\'s concurrency or rate limit before it started, in nanoseconds (0 when it did not): not part of lateness_ns, so a wait the rule asked for never reads as the scheduler being late.'),
    duration_ns: ns('How long the runner ran, in nanoseconds (0 when nothing ran).'),
    rule: { anyOf: [ref('Identifier'), { type: 'null' }], description: 'The rule whose runner ran; null when no rule matched.' },
    runner: { anyOf: [{ enum: [...RUNNER_TYPES] }, { type: 'null' }], description: 'That runner\'s kind; null when no rule matched.' },
    node: { type: 'string', description: 'Cluster mode: the node that ran the attempt. Absent from a single daemon\'s attempts, and where nothing ran (no_rule, no_node).' },
    success: { type: 'boolean', description: 'Whether the attempt succeeded (the job then became executed).' },
    summary: { type: 'string', description: 'The outcome in one line, as the warning of a failed job gives it: `exit status 3`, `HTTP status 503`, `no matching rule`.' },
    outcome: ref('AttemptOutcome'),
  }, { description: 'The last attempt of a job: its runner\'s start, lateness, duration and outcome. Kept in memory by the daemon (the leader, in cluster mode), at most 100000 jobs\' worth (the most recent).' }),
  AttemptList: closed(['attempts'], { attempts: { type: 'array', items: ref('Attempt'), description: 'Oldest first.' } }, { description: 'A job\'s last attempts (GET /jobs/{id}/attempts).' }),
  AttemptOutcome: {
    type: 'object',
    description: 'The outcome in the runner\'s own terms, told apart by `kind`.',
    oneOf: OUTCOME_KINDS.map((k) => ref(outcomeName(k))),
    discriminator: { propertyName: 'kind', mapping: Object.fromEntries(OUTCOME_KINDS.map((k) => [k, `#/components/schemas/${outcomeName(k)}`])) },
  },
  ...outcomeSchemas,
  Activity: closed(['interval_ms', 'buckets'], {
    interval_ms: { type: 'integer', const: 1000, description: 'The width of a bucket, in milliseconds.' },
    buckets: { type: 'array', items: ref('ActivityBucket'), description: 'The last 300 seconds, oldest first; the last bucket is the current second, still filling. Seconds without activity are zeros.' },
  }, { description: 'What the scheduler did in each second of the last five minutes.' }),
  ActivityBucket: closed(['at_ms', 'fired', 'executed', 'failed', 'lateness_p50_ms', 'lateness_max_ms'], {
    at_ms: { type: 'integer', minimum: 0, description: 'The start of the second, milliseconds since the Unix epoch.' },
    fired: { type: 'integer', minimum: 0, description: 'Due jobs the scheduler took in this second (a runner was started for them, or no rule matched).' },
    executed: { type: 'integer', minimum: 0, description: 'Executions that finished successfully in this second.' },
    failed: { type: 'integer', minimum: 0, description: 'Executions that failed in this second, and due jobs no rule matched.' },
    lateness_p50_ms: { type: ['number', 'null'], description: 'The median lateness of the runners started in this second, in milliseconds (from up to 256 starts sampled at random); null when none started.' },
    lateness_max_ms: { type: ['number', 'null'], description: 'The greatest lateness of the runners started in this second, in milliseconds; null when none started.' },
  }),
};

// Examples, checked against the schemas by the tests.
const SHELL_FAILED = {
  id: 'backup.nightly', status: 'failed', execution: 1893466800000000000n, attempt: 1,
  last_attempt: {
    attempt: 1, started_ns: 1893466800001234567n, lateness_ns: 1234567n, held_ns: 0n, duration_ns: 48210332n, rule: 'backup.', runner: 'shell',
    success: false, summary: 'exit status 3', outcome: { kind: 'exit', status: 3, stderr: 'tar: /srv/data: Cannot open: Permission denied\n' },
  },
};
const HTTP_DOWN = {
  id: 'mail.welcome.42', status: 'failed', execution: 1893484800123456789n, attempt: 1,
  last_attempt: {
    attempt: 1, started_ns: 1893484800125001000n, lateness_ns: 1544211n, held_ns: 0n, duration_ns: 812000n, rule: 'mail.', runner: 'http',
    success: false, summary: 'network error: connect ECONNREFUSED 127.0.0.1:9000',
    outcome: { kind: 'network_error', error: 'connect ECONNREFUSED 127.0.0.1:9000' },
  },
};
const NO_RULE = {
  id: 'orphan.1', status: 'failed', execution: 1893484800000000000n, attempt: 1,
  last_attempt: {
    attempt: 1, started_ns: 1893484800000950000n, lateness_ns: 950000n, held_ns: 0n, duration_ns: 0n, rule: null, runner: null,
    success: false, summary: 'no matching rule', outcome: { kind: 'no_rule' },
  },
};
const PLACED = {
  id: 'dump.nightly', status: 'executed', execution: 1893466800000000000n, attempt: 1,
  last_attempt: {
    attempt: 1, started_ns: 1893466800002100000n, lateness_ns: 2100000n, held_ns: 0n, duration_ns: 93120000000n, rule: 'dump.', runner: 'direct',
    node: 'n2', success: true, summary: 'exit status 0', outcome: { kind: 'exit', status: 0, stderr: '' },
  },
};
const NO_NODE = {
  id: 'dump.weekly', status: 'failed', execution: 1893466800000000000n, attempt: 1,
  last_attempt: {
    attempt: 1, started_ns: 1893466860000000000n, lateness_ns: 300000n, held_ns: 0n, duration_ns: 0n, rule: 'dump.', runner: 'direct',
    success: false, summary: 'no live node has the tags db, eu', outcome: { kind: 'no_node', on: ['db', 'eu'] },
  },
};

const hook = (attempt: number, startedNs: bigint, status: number): JsonValue => ({
  attempt, started_ns: startedNs, lateness_ns: 812000n, held_ns: 0n, duration_ns: 41000000n, rule: 'hooks.', runner: 'http',
  success: status < 300, summary: `HTTP status ${status}`, outcome: { kind: 'http_response', status },
});
/** GET /jobs/{id}/attempts: two failures a second and two seconds apart (exponential from 1s), then a success. */
export const ATTEMPT_HISTORY = { attempts: [hook(1, 1893484800000812000n, 503), hook(2, 1893484801041812000n, 500), hook(3, 1893484803082812000n, 200)] };

/** Examples of GET /jobs/{id}'s 200 beside the plain job ones: name -> [summary, value]. */
export const JOB_DETAIL_EXAMPLES: Readonly<Record<string, readonly [string, JsonValue]>> = {
  shellFailed: ['A shell job whose command exited 3', SHELL_FAILED],
  httpDown: ['An http job whose server refused the connection', HTTP_DOWN],
  noRule: ['A job no rule matched', NO_RULE],
  placed: ['Cluster mode: a job run on node n2', PLACED],
  noNode: ['Cluster mode: no live node had the rule\'s tags in time', NO_NODE],
};

const ACTIVITY_EXAMPLE = {
  interval_ms: 1000,
  buckets: [
    { at_ms: 1893484798000, fired: 0, executed: 0, failed: 0, lateness_p50_ms: null, lateness_max_ms: null },
    { at_ms: 1893484799000, fired: 120, executed: 117, failed: 2, lateness_p50_ms: 0.84, lateness_max_ms: 2.31 },
    { at_ms: 1893484800000, fired: 35, executed: 30, failed: 0, lateness_p50_ms: 0.91, lateness_max_ms: 1.7 },
  ],
};

const METRICS_EXAMPLE = [
  '# HELP target_info Target metadata',
  '# TYPE target_info gauge',
  'target_info{service_name="tickd",service_version="0.1.0",telemetry_sdk_language="nodejs",telemetry_sdk_name="opentelemetry",telemetry_sdk_version="2.12.0"} 1',
  '# HELP tickd_execution_outcomes_total Executions by runner kind and outcome in the runner\'s terms; due jobs no rule matched as runner kind none.',
  '# UNIT tickd_execution_outcomes_total {execution}',
  '# TYPE tickd_execution_outcomes_total counter',
  'tickd_execution_outcomes_total{tickd_runner_kind="shell",tickd_runner_outcome="exit",tickd_outcome="failed",otel_scope_name="tickd",otel_scope_version="0.1.0"} 1',
  '# HELP tickd_execution_lateness_ms How late a runner started after its job\'s execution time (due jobs no rule matched: how late they fired).',
  '# UNIT tickd_execution_lateness_ms ms',
  '# TYPE tickd_execution_lateness_ms histogram',
  'tickd_execution_lateness_ms_count{otel_scope_name="tickd",otel_scope_version="0.1.0"} 1',
  'tickd_execution_lateness_ms_sum{otel_scope_name="tickd",otel_scope_version="0.1.0"} 1.234567',
  'tickd_execution_lateness_ms_bucket{otel_scope_name="tickd",otel_scope_version="0.1.0",le="0.5"} 0',
  'tickd_execution_lateness_ms_bucket{otel_scope_name="tickd",otel_scope_version="0.1.0",le="1"} 0',
  'tickd_execution_lateness_ms_bucket{otel_scope_name="tickd",otel_scope_version="0.1.0",le="2"} 1',
  'tickd_execution_lateness_ms_bucket{otel_scope_name="tickd",otel_scope_version="0.1.0",le="+Inf"} 1',
  '',
].join('\n');

/** The shape of an operation lib/http/openapi.ts turns into the document (its `Op`). */
interface ObserveOp {
  readonly id: string;
  readonly tag: 'meta';
  readonly summary: string;
  readonly description: string;
  readonly ok: Obj;
  readonly errors: Readonly<Record<string, string>>;
}

const examples = (named: Readonly<Record<string, readonly [string, JsonValue]>>): Obj =>
  Object.fromEntries(Object.entries(named).map(([name, [summary, value]]) => [name, { summary, value }]));

/** GET /activity and GET /metrics, by path. */
export const OBSERVE_OPS: Readonly<Record<'/activity' | '/metrics', ObserveOp>> = {
  '/activity': {
    id: 'getActivity', tag: 'meta', summary: 'Scheduler activity per second, last five minutes',
    description: 'For each second of the last 300: the due jobs fired, the executions that finished executed or failed, and the median and greatest lateness of the runners started in it. In cluster mode the leader\'s (followers forward the request), which fires the jobs. Allowed for any token, whatever its namespace.',
    ok: { '200': { description: 'The window, oldest second first.', content: { 'application/json': { schema: ref('Activity'), examples: examples({ busy: ['A daemon firing jobs', ACTIVITY_EXAMPLE] }) } } } },
    errors: {},
  },
  '/metrics': {
    id: 'getMetrics', tag: 'meta', summary: 'Metrics in the Prometheus text format',
    description: 'This node\'s metrics (the OpenTelemetry instruments of tickd.toml(5) [telemetry], the same values OTLP export sends) in the Prometheus text exposition format 0.0.4, written by the OpenTelemetry Prometheus exporter: dots become underscores, counters end in `_total`, histograms give `_bucket`, `_sum` and `_count`. Served whether or not OTLP export is enabled. In cluster mode every node answers with its own. Allowed for any token, whatever its namespace.',
    ok: { '200': {
      description: 'The metrics; Content-Type `text/plain; version=0.0.4; charset=utf-8`.',
      content: { 'text/plain': { schema: { type: 'string' }, examples: examples({ abridged: ['An excerpt', METRICS_EXAMPLE] }) } },
    } },
    errors: {},
  },
};
