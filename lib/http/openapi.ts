// The OpenAPI 3.1.1 document served at GET /openapi.json (tickd-protocol(7) HTTP INTERFACE).
// It describes exactly what lib/http serves, for the running configuration: with an auth_file
// every data route carries the bearer security requirement and its 401/403 answers; without
// one the interface is open and the document says so by omitting them (and their components).
// GET /cluster, its schemas and its tag appear only in cluster mode, where the route exists.
//
// Invariants (test/unit/http/openapi.test.ts; test/integration/openapi-*.test.ts run Redocly,
// Spectral and openapi-typescript on it):
// - HEAD is served for every GET route (Node drops the body), so it is documented too, as a
//   twin with the same statuses and headers and no bodies. /docs/ hides the twins (they would
//   double the list and say nothing new); clients and the response checks still see them.
// - `servers` is the relative `/`: the document is served by the daemon it describes, so the
//   API is wherever the document was fetched from (OpenAPI resolves a relative server URL
//   against the document's URL); no configured address could be more true than that.
// - Every operation has one tag, a summary, a description and examples; every example is
//   checked against its schema.
// - Nanosecond integers are `format: int64`, written exactly (lib/http/json.ts); info and each
//   field say that a double rounds them.
import type { JsonValue } from './json.ts';
import { SCHEMAS } from './openapi-schemas.ts';
import { ATTEMPT_HISTORY, JOB_DETAIL_EXAMPLES, OBSERVE_OPS, OBSERVE_SCHEMAS } from './openapi-observe.ts';
import { RETRY_RULE, RETRY_RULE_INPUT, WAITING_JOB } from './openapi-rule-options.ts';
import { SCHEDULE_OPS, SCHEDULE_PARAMETERS, SCHEDULE_RESPONSES, SCHEDULE_SCHEMAS } from './openapi-schedules.ts';
import { MAX_BODY_BYTES } from './body.ts';
import { DEFAULT_PAGE_ENTRIES } from './list-page.ts';
import { MAX_PAGE_ENTRIES } from '../domain/page.ts';
import { JOB_STATUSES } from '../domain/job.ts';

type Obj = { [key: string]: JsonValue };

export interface OpenApiOptions {
  readonly version: string;
  /** true when an auth_file is configured. */
  readonly auth: boolean;
  /** true when the daemon runs with --cluster. */
  readonly cluster: boolean;
}

/** Named examples: name -> [summary, value]. */
type Examples = Readonly<Record<string, readonly [string, JsonValue]>>;

const examplesOf = (examples: Examples): Obj =>
  Object.fromEntries(Object.entries(examples).map(([name, [summary, value]]) => [name, { summary, value }]));
const json = (schema: JsonValue, examples?: Examples): Obj =>
  ({ 'application/json': { schema, ...(examples !== undefined && { examples: examplesOf(examples) }) } });
const ref = (name: string): Obj => ({ $ref: `#/components/schemas/${name}` });
const response = (description: string, schema?: JsonValue, examples?: Examples, headers?: Obj): Obj =>
  ({ description, ...(schema !== undefined && { content: json(schema, examples) }), ...(headers !== undefined && { headers }) });
const error = (description: string, examples: Examples, headers?: Obj): Obj => response(description, ref('Error'), examples, headers);
const says = (message: string): JsonValue => ({ error: message });

// 400 answers differ by operation (each names what it found wrong): they are written per
// operation, with that operation's own examples. These are the ones shared as they are.
const RESPONSES: Obj = {
  Unauthorized: error('Missing or unknown bearer token.', { unauthorized: ['No or an unknown token', says('unauthorized')] }, {
    'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string', const: 'Bearer' }, example: 'Bearer' },
  }),
  Forbidden: error('The identifier (or a rule\'s pattern) lies outside the token\'s namespace.', {
    outside: ['Outside the token\'s namespace', says('insufficient namespace scope')],
  }),
  JobNotFound: error('No such job.', { job: ['No such job', says('job "mail.welcome.42" does not exist')] }),
  RuleNotFound: error('No such rule.', { rule: ['No such rule', says('rule "mail." does not exist')] }),
  PayloadTooLarge: error(`The request body exceeds ${MAX_BODY_BYTES} bytes.`, { tooLarge: ['Body too large', says(`request body exceeds ${MAX_BODY_BYTES} bytes`)] }),
  UnsupportedMediaType: error('The request body is not `application/json` (a utf-8 charset parameter is allowed).', {
    notJson: ['Wrong or missing Content-Type', says('Content-Type must be application/json')],
  }),
  Internal: error('Server error; the message never carries details.', { internal: ['Any server-side failure', says('internal')] }),
  ...SCHEDULE_RESPONSES,
};
/** Responses only an authenticated interface gives. */
const AUTH_RESPONSES: ReadonlySet<string> = new Set(['Unauthorized', 'Forbidden']);

const use = (name: string): Obj => ({ $ref: `#/components/responses/${name}` });
const BAD_REQUEST = 'Invalid request: the message names the field, parameter or identifier at fault.';
const badId = (kind: 'job' | 'rule'): readonly [string, JsonValue] =>
  ['The path identifier is not valid', says(`${kind} identifier contains invalid character space (allowed: letters, digits, . - _ :)`)];

type Tag = 'jobs' | 'rules' | 'schedules' | 'meta' | 'cluster';
const TAGS: Readonly<Record<Tag, string>> = {
  jobs: 'Jobs: an identifier and an execution time in nanoseconds; planned until the time comes, then executed or failed.',
  rules: 'Rules: an identifier prefix mapped to the runner that executes matching jobs (the longest matching pattern wins).',
  schedules: 'Schedules: a cron expression or a fixed interval in a time zone; each occurrence becomes a job, decided exactly once.',
  meta: 'The service itself: statistics, liveness, readiness, this document, and which token a request carries.',
  cluster: 'Cluster mode (several nodes on NATS JetStream): how this node sees its cluster.',
};

interface Op {
  readonly id: string;
  readonly tag: Tag;
  readonly summary: string;
  readonly description: string;
  readonly params?: readonly string[];
  readonly body?: { readonly schema: string; readonly examples: Examples };
  readonly ok: Obj;
  /** Examples of this operation's 400 answers; none: it has no 400. */
  readonly bad?: Examples;
  /** Shared error responses besides 400, 401 and 500 (every authenticated operation has 401). */
  readonly errors: Readonly<Record<string, string>>;
  readonly open?: boolean;
}

function operation(op: Op, auth: boolean): Obj {
  const responses: Obj = { ...op.ok };
  if (op.bad !== undefined) responses['400'] = error(BAD_REQUEST, op.bad);
  for (const [status, name] of Object.entries(op.errors)) {
    if (auth || !AUTH_RESPONSES.has(name)) responses[status] = use(name);
  }
  if (op.open !== true && auth) responses['401'] = use('Unauthorized');
  // Any handler failure is answered 500, open routes included.
  responses['500'] = use('Internal');
  return {
    tags: [op.tag],
    operationId: op.id,
    summary: op.summary,
    description: op.description,
    ...(op.params !== undefined && { parameters: op.params.map((p) => ({ $ref: `#/components/parameters/${p}` })) }),
    ...(op.body !== undefined && { requestBody: { required: true, content: json(ref(op.body.schema), op.body.examples) } }),
    responses,
    ...(op.open === true && auth && { security: [] }),
  };
}

/** The HEAD twin of a GET operation: same statuses and headers, no bodies. */
function head(get: Obj): Obj {
  const responses: Obj = {};
  for (const [status, r] of Object.entries(get['responses'] as Obj)) {
    const shared = (r as Obj)['$ref'];
    const full = (typeof shared === 'string' ? RESPONSES[shared.slice(shared.lastIndexOf('/') + 1)] : r) as Obj;
    responses[status] = { description: full['description'] ?? '', ...(full['headers'] !== undefined && { headers: full['headers'] }) };
  }
  return {
    ...get,
    operationId: `${String(get['operationId'])}Head`,
    summary: `${String(get['summary'])} (headers only)`,
    description: `The status and headers GET would answer, without a body. ${String(get['description'])}`,
    responses,
  };
}

// Example values, shared by several operations. Nanoseconds are bigints: written exactly.
const JOB = { id: 'mail.welcome.42', status: 'planned', execution: 1893484800123456789n, attempt: 0 };
const DONE_JOB = { id: 'backup.now', status: 'executed', execution: 1700000000000000000n, attempt: 1 };
const FAILED_JOB = { id: 'backup.nightly', status: 'failed', execution: 1893466800000000000n, attempt: 1 };
const HTTP_RULE = { id: 'mail.', pattern: 'mail.', runner: { type: 'http', method: 'POST', url: 'http://127.0.0.1:9000/send' } };
const SHELL_RULE = { id: 'backup.', pattern: 'backup.', runner: { type: 'shell', command: 'echo backing up "$TICKD_JOB_ID" >> /tmp/tickd-demo.log' } };
const AWF_RULE = { id: 'report.', pattern: 'report.', runner: { type: 'awf', workflow: 'monthly-report', inputs: ['format=pdf'] } };
/** Cluster mode: a dump that runs only on a node tagged both db and eu. */
const PLACED_RULE = { id: 'dump.', pattern: 'dump.', runner: { type: 'direct', executable: '/usr/bin/pg_dump', args: ['-f', '/srv/dump/latest.sql', 'app'] }, on: ['db', 'eu'] };

const PAGE_HEADERS: Obj = {
  Link: {
    description: 'Present while more entries may follow: `<URL of the next page>; rel="next"` (RFC 8288). Follow it until it is absent. A page holds `limit` entries unless it is the last.',
    schema: { type: 'string' },
    example: '</jobs?prefix=mail.&limit=2&cursor=17>; rel="next"',
  },
};
const STATUS_NOTE = 'The status filter is applied as the daemon walks its jobs: a job whose status changes during a walk is listed if it has a wanted status when its turn comes; pages stay full but for the last, however rare the status.';
const PAGE_NOTE = `Paged: at most \`limit\` entries (default ${DEFAULT_PAGE_ENTRIES}, at most ${MAX_PAGE_ENTRIES}) per response, in no particular order; a Link header names the next page. Entries present for a whole walk appear exactly once; ones created or deleted during it may or may not appear.`;
const listOk = (what: string, item: string, examples: Examples): Obj =>
  ({ '200': response(`${what}, one page.`, { type: 'array', items: ref(item) }, examples, PAGE_HEADERS) });
const LIST_PARAMS = ['Prefix', 'Limit', 'Cursor'];
const JOB_LIST_PARAMS = ['Prefix', 'Status', 'Limit', 'Cursor'];

const jobOk = { '200': response('The job, and its last attempt when one is recorded.', ref('JobDetail'), { planned: ['A planned job', JOB], executed: ['A job whose runner has run', DONE_JOB], waiting: ['A job whose second attempt failed, waiting for its third', WAITING_JOB], ...JOB_DETAIL_EXAMPLES }) };
const ruleOk = { '200': response('The rule, runner in object form.', ref('Rule'), { http: ['An http runner', HTTP_RULE], shell: ['A shell runner', SHELL_RULE], limits: ['With retries and limits', RETRY_RULE] }) };
const deleted = { '204': { description: 'Deleted; no body.' } };
const BODY_ERRORS = { '403': 'Forbidden', '413': 'PayloadTooLarge', '415': 'UnsupportedMediaType' };
const notValidJson: readonly [string, JsonValue] = ['The body is not JSON', says('request body is not valid JSON')];
const LIST_BAD: Examples = {
  limit: ['limit out of range', says(`query parameter limit must be an integer from 1 to ${MAX_PAGE_ENTRIES}`)],
  prefix: ['prefix given twice', says('query parameter prefix must be given at most once')],
};
const JOB_LIST_BAD: Examples = {
  ...LIST_BAD,
  status: ['An unknown status', says(`query parameter status: unknown status "done" (allowed: ${JOB_STATUSES.join(', ')}, several separated by commas)`)],
};
const NAMESPACE = 'With an auth_file, only identifiers inside the token\'s namespace are visible (403 outside it).';

function stats(auth: boolean): JsonValue {
  return {
    uptime_ns: 5123456789n, connections: 2, jobs_total: 3, jobs_planned: 2, jobs_triggered: 0, jobs_executed: 1, jobs_failed: 0,
    rules_total: 2, executions_pending: 0, executions_inflight: 0, persistence: 'logfile', compression: 'idle',
    auth_enabled: auth ? 1 : 0, tls_enabled: 0, framerate: 512,
  };
}

const CLUSTER_LEADER = {
  cluster: 'tickd', node: 'n1', role: 'leader', leader: 'n1', last_seq: 1042, applied_seq: 1042,
  nodes: [
    { name: 'n1', role: 'leader', applied_seq: 1042, lag: 0, seen_ago_ms: 0, format: 2 },
    { name: 'n2', role: 'follower', applied_seq: 1041, lag: 1, seen_ago_ms: 420, format: 2 },
  ],
  format: 2, active_format: 2, upgrade_needed: null,
};
const CLUSTER_ELECTING = {
  cluster: 'tickd', node: 'n2', role: 'follower', leader: null, last_seq: 1042, applied_seq: 1042, nodes: [], format: 2, active_format: 2, upgrade_needed: null,
};

function paths(opts: OpenApiOptions): Obj {
  const { auth, cluster } = opts;
  const get = (op: Op): Obj => { const o = operation(op, auth); return { get: o, head: head(o) }; };
  const one = (op: Op): Obj => operation(op, auth);
  return {
    '/jobs': get({
      id: 'listJobs', tag: 'jobs', summary: 'List jobs, optionally by identifier prefix and status', params: JOB_LIST_PARAMS,
      description: `Jobs whose identifier starts with \`prefix\` (all without it) and, with \`status\`, whose status is one of those named. ${PAGE_NOTE} ${STATUS_NOTE} With an auth_file, the list is narrowed to the token's namespace.`,
      ok: listOk('Jobs', 'Job', { page: ['A page of jobs', [JOB, DONE_JOB, WAITING_JOB]], failed: ['With status=failed', [FAILED_JOB]], empty: ['Nothing matches', []] }), bad: JOB_LIST_BAD, errors: {},
    }),
    // The id parameter is given per operation, not on the path item: Swagger UI (5.x) leaves a
    // path-level $ref parameter unresolved ("any", no name) in /docs/.
    '/jobs/{id}': {
      put: one({
        id: 'putJob', tag: 'jobs', summary: 'Create or replace a job', params: ['JobId'],
        description: `Stores the job planned at \`execution\` (whatever it was before); it runs when that time comes, through the runner of the longest rule pattern matching its identifier. A time in the past runs at once. ${NAMESPACE}`,
        body: { schema: 'JobInput', examples: { offset: ['With a zone offset and nanoseconds', { execution: '2030-01-01T09:00:00.123456789+01:00' }], utc: ['In UTC', { execution: '2030-01-01T03:00:00Z' }] } },
        ok: { '200': response('The job as stored (status planned).', ref('Job'), { stored: ['The stored job', JOB] }) },
        bad: {
          missing: ['No execution', says('execution is required')],
          noZone: ['execution is not a string with a zone', says('execution must be an ISO 8601 string with a zone, e.g. "2026-04-10T12:00:00Z"')],
          json: notValidJson, id: badId('job'),
        },
        errors: BODY_ERRORS,
      }),
      ...get({ id: 'getJob', tag: 'jobs', summary: 'Read a job', params: ['JobId'], description: `The job's status and execution time. ${NAMESPACE}`, ok: jobOk, bad: { id: badId('job') }, errors: { '403': 'Forbidden', '404': 'JobNotFound' } }),
      delete: one({ id: 'deleteJob', tag: 'jobs', summary: 'Delete a job', params: ['JobId'], description: `Removes the job; a planned job then never runs. ${NAMESPACE}`, ok: deleted, bad: { id: badId('job') }, errors: { '403': 'Forbidden', '404': 'JobNotFound' } }),
    },
    '/jobs/{id}/attempts': get({
      id: 'getJobAttempts', tag: 'jobs', summary: 'Read a job\'s last attempts', params: ['JobId'],
      description: `The job's last attempts, oldest first, as {"attempts": [...]}: at most \`attempt_history\` of them (tickd.toml(5), default 10), kept in the daemon's memory (the leader's, in cluster mode) since it started; empty for a job that has not run since. ${NAMESPACE}`,
      ok: { '200': response('The attempts, oldest first.', ref('AttemptList'), { retried: ['Two failures, then a success', ATTEMPT_HISTORY], none: ['Not run yet', { attempts: [] }] }) },
      bad: { id: badId('job') }, errors: { '403': 'Forbidden', '404': 'JobNotFound' },
    }),
    '/jobs/{id}/retry': {
      post: one({
        id: 'retryJob', tag: 'jobs', summary: 'Run a failed job again now', params: ['JobId'],
        description: `A failed job is planned again at the present time and runs at once, its attempts afresh (its rule's retry policy all over again); its executions carry new keys (doc/execution.md). Any other status is refused (400): a planned, running or waiting job is on its way already, and an executed one succeeded (PUT it to run it again). ${NAMESPACE}`,
        ok: { '200': response('The job as stored (status planned, its time now).', ref('Job'), { planned: ['Planned again', JOB] }) },
        bad: { notFailed: ['The job has not failed', says('job "mail.welcome.42" is executed: only a failed job is run again')], id: badId('job') },
        errors: { '403': 'Forbidden', '404': 'JobNotFound' },
      }),
    },
    '/rules': get({
      id: 'listRules', tag: 'rules', summary: 'List rules, optionally by rule identifier prefix', params: LIST_PARAMS,
      description: `Rules whose identifier starts with \`prefix\` (all without it), runners in object form. ${PAGE_NOTE} With an auth_file, the list is narrowed to the token's namespace.`,
      ok: listOk('Rules', 'Rule', { page: ['A page of rules', [HTTP_RULE, SHELL_RULE, AWF_RULE, RETRY_RULE]], empty: ['Nothing matches', []] }), bad: LIST_BAD, errors: {},
    }),
    '/rules/{id}': {
      put: one({
        id: 'putRule', tag: 'rules', summary: 'Create or replace a rule', params: ['RuleId'],
        description: `Stores the rule: jobs whose identifier starts with \`pattern\` run its runner (the longest matching pattern wins). The runner is given in object form or in string form; the answer always uses the object form. \`retry\`, \`concurrency\`, \`rate\` (tickd-protocol(7) RETRIES AND LIMITS) and \`on\` (the node tags its jobs require in cluster mode) are optional; a rule stored again without them has none. amqp and redis runners can only be set over TCP. ${NAMESPACE} The pattern must lie inside it too.`,
        body: {
          schema: 'RuleInput', examples: {
            http: ['Object form: an HTTP webhook', { pattern: 'mail.', runner: HTTP_RULE.runner }],
            shell: ['Object form: a shell command', { pattern: 'backup.', runner: SHELL_RULE.runner }],
            awfString: ['String form: an awf workflow with an input', { pattern: 'report.', runner: 'awf', args: ['monthly-report', '--input', 'format=pdf'] }],
            limits: ['A webhook retried with backoff, 4 at once, 10 a second at most', RETRY_RULE_INPUT],
            placed: ['Cluster mode: only on a node tagged db and eu', { pattern: PLACED_RULE.pattern, runner: PLACED_RULE.runner, on: PLACED_RULE.on }],
          },
        },
        ok: { '200': response('The rule as stored, runner in object form.', ref('Rule'), { http: ['The stored rule', HTTP_RULE], awf: ['A string-form awf rule as stored', AWF_RULE], limits: ['With retries and limits, every retry field written out', RETRY_RULE], placed: ['With the node tags its jobs require', PLACED_RULE] }) },
        bad: {
          missing: ['No pattern', says('pattern is required')],
          tcpOnly: ['A runner kind only TCP can set', says('runner.type "redis" can only be set over the TCP interface')],
          shellArgs: ['String form with the wrong args', says('args must be [command] for a shell runner')],
          retry: ['A retry policy without its delay', says('retry.delay: is required when attempts is more than 1')],
          twice: ['A key given twice in one object of the body', says('attempts: given twice')],
          json: notValidJson, id: badId('rule'),
        },
        errors: BODY_ERRORS,
      }),
      ...get({ id: 'getRule', tag: 'rules', summary: 'Read a rule', params: ['RuleId'], description: `The rule's pattern and runner (object form). ${NAMESPACE}`, ok: ruleOk, bad: { id: badId('rule') }, errors: { '403': 'Forbidden', '404': 'RuleNotFound' } }),
      delete: one({ id: 'deleteRule', tag: 'rules', summary: 'Delete a rule', params: ['RuleId'], description: `Removes the rule. Jobs meet their rule when they come due: the ones it matched then run through the longest rule still matching them, or fail if none does. ${NAMESPACE}`, ok: deleted, bad: { id: badId('rule') }, errors: { '403': 'Forbidden', '404': 'RuleNotFound' } }),
    },
    '/schedules': get(SCHEDULE_OPS.list),
    '/schedules/{id}': { put: one(SCHEDULE_OPS.put), ...get(SCHEDULE_OPS.get), delete: one(SCHEDULE_OPS.delete) },
    '/schedules/{id}/next': get(SCHEDULE_OPS.next),
    '/schedules/{id}/occurrences': get(SCHEDULE_OPS.occurrences),
    '/schedules/{id}/pause': { post: one(SCHEDULE_OPS.pause) },
    '/schedules/{id}/resume': { post: one(SCHEDULE_OPS.resume) },
    '/schedules/{id}/run': { post: one(SCHEDULE_OPS.run) },
    '/stats': get({
      id: 'getStats', tag: 'meta', summary: 'Service statistics',
      description: 'The values of the TCP STAT command, in the same order; numbers are exact integers. Allowed for any token, whatever its namespace.',
      ok: { '200': response('The statistics.', ref('Stats'), { running: ['A daemon with a logfile', stats(auth)] }) }, errors: {},
    }),
    '/whoami': get({
      id: 'getWhoami', tag: 'meta', summary: 'The token of this request',
      description: auth
        ? 'The name and namespace the token file gives the bearer token of this request (never its secret). A wrong token is 401 here as everywhere, so this is how a client checks a secret before keeping it. Allowed for any token, whatever its namespace.'
        : 'No auth_file is configured: every caller has full access without a token, so the answer is always {"name": null, "namespace": "*", "auth_enabled": false}.',
      ok: { '200': response('The token.', ref('WhoAmI'), auth
        ? { admin: ['A token for every identifier', { name: 'admin', namespace: '*', auth_enabled: true }], scoped: ['A token for one namespace', { name: 'billing', namespace: 'billing.', auth_enabled: true }] }
        : { open: ['No auth_file', { name: null, namespace: '*', auth_enabled: false }] }) },
      errors: {},
    }),
    '/activity': get(OBSERVE_OPS['/activity']),
    '/metrics': get(OBSERVE_OPS['/metrics']),
    // Every node answers this one itself, whatever its role: no error of its own.
    ...(cluster && {
      '/cluster': get({
        id: 'getCluster', tag: 'cluster', summary: 'This node\'s view of its cluster',
        description: 'The answering node, its role, the leader, stream sequences and every node recently heard from. Every node answers it itself, leader or follower. Allowed for any token, whatever its namespace.',
        ok: { '200': response('The view.', ref('Cluster'), { leader: ['Asked of the leader', CLUSTER_LEADER], electing: ['While no node holds the lease', CLUSTER_ELECTING] }) }, errors: {},
      }),
    }),
    '/health': get({
      id: 'getHealth', tag: 'meta', summary: 'Liveness probe', description: 'Answers 200 while the daemon accepts HTTP requests. Needs no authentication.',
      ok: { '200': response('Up.', ref('Health'), { up: ['Up', { status: 'ok' }] }) }, errors: {}, open: true,
    }),
    '/ready': get({
      id: 'getReady', tag: 'meta', summary: 'Readiness probe',
      description: 'Answers 200 once the daemon is ready to serve (in cluster mode: it knows its role, leader or follower, and either serves clients), and 503 before that (commands may already be answered while it starts) and from the start of a graceful stop on. Route traffic by this one; /health answers 200 whenever the daemon answers at all. Needs no authentication.',
      ok: {
        '200': response('Ready.', ref('Ready'), { ready: ['Ready', { status: 'ready' }] }),
        '503': error('Not ready: still starting, or stopping.', { starting: ['Still starting', says('not ready: starting')], stopping: ['Stopping', says('not ready: stopping')] }),
      },
      errors: {}, open: true,
    }),
    '/openapi.json': get({
      id: 'getOpenApi', tag: 'meta', summary: 'This document',
      description: 'The OpenAPI 3.1.1 document of this daemon, for its configuration (authentication, cluster mode). Needs no authentication.',
      ok: { '200': response('The OpenAPI document.', { type: 'object' }, { start: ['Its first fields (abridged)', { openapi: '3.1.1', info: { title: 'tickd', version: opts.version } }] }) },
      errors: {}, open: true,
    }),
  };
}

// Only GET /cluster refers to these: without it they would be dead weight in the document.
const CLUSTER_SCHEMAS: ReadonlySet<string> = new Set(['Cluster', 'ClusterNode', 'NodeRole']);

const idParam = (kind: string, schema: string, example: string): Obj => ({
  name: 'id', in: 'path', required: true, schema: ref(schema), example,
  description: `The ${kind} identifier, percent-decoded before validation.`,
});

export function buildOpenApi(opts: OpenApiOptions): JsonValue {
  const description = [
    'HTTP JSON interface of tickd, a job scheduler. Same store as the TCP line protocol.',
    'Every error body is {"error": string}. A method not offered on a path answers 405 with an `Allow` header;',
    'an unknown path answers 404. HEAD is answered for every GET operation, with its status and headers and no body.',
    'Precision: times (`execution`, a schedule\'s `start`, `end` and `next`) and `uptime_ns` are integer nanoseconds (`format: int64`), written as exact integers.',
    'Current times are above 2^53, where an IEEE-754 double (JavaScript\'s JSON.parse, many JSON libraries) rounds them:',
    'parse them as 64-bit integers (in JavaScript, a JSON.parse reviver reading `context.source`, or a BigInt-aware parser).',
    opts.auth
      ? 'Every route except /health, /ready and /openapi.json needs `Authorization: Bearer <secret>` with a secret from the token file; identifiers outside the token\'s namespace are refused (403) and lists are narrowed to it.'
      : 'No auth_file is configured: every route is open.',
  ].join(' ');
  return {
    openapi: '3.1.1',
    info: { title: 'tickd', version: opts.version, description, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/', description: 'The daemon serving this document.' }],
    tags: (Object.keys(TAGS) as Tag[]).filter((t) => t !== 'cluster' || opts.cluster).map((name) => ({ name, description: TAGS[name] })),
    paths: paths(opts),
    components: {
      schemas: { ...(opts.cluster ? SCHEMAS : Object.fromEntries(Object.entries(SCHEMAS).filter(([name]) => !CLUSTER_SCHEMAS.has(name)))), ...SCHEDULE_SCHEMAS, ...OBSERVE_SCHEMAS },
      responses: opts.auth ? RESPONSES : Object.fromEntries(Object.entries(RESPONSES).filter(([name]) => !AUTH_RESPONSES.has(name))),
      parameters: {
        JobId: idParam('job', 'Identifier', 'mail.welcome.42'),
        RuleId: idParam('rule', 'Identifier', 'mail.'),
        Prefix: { name: 'prefix', in: 'query', required: false, schema: ref('Pattern'), example: 'mail.', description: 'Only identifiers starting with this; absent or empty lists everything.' },
        Status: {
          name: 'status', in: 'query', required: false, example: 'failed',
          schema: { type: 'string', pattern: `^(${JOB_STATUSES.join('|')})(,(${JOB_STATUSES.join('|')}))*$` },
          description: `Only jobs in this status, or in any of several separated by commas (\`executed,failed\`): ${JOB_STATUSES.join(', ')}. Absent: any status. Anything else is a 400.`,
        },
        Limit: { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_ENTRIES, default: DEFAULT_PAGE_ENTRIES }, example: 100, description: 'Entries per page at most.' },
        ...SCHEDULE_PARAMETERS,
        Cursor: { name: 'cursor', in: 'query', required: false, schema: { type: 'string', pattern: '^[0-9]{1,10}$' }, example: '17', description: 'Where the page starts: copy it from the previous page\'s Link header; treat it as opaque. It is only meaningful until the daemon restarts.' },
      },
      ...(opts.auth && { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A secret from the token file.' } } }),
    },
    // Without an auth_file there is no requirement at all, and no `security` says so.
    ...(opts.auth && { security: [{ bearer: [] }] }),
  };
}
