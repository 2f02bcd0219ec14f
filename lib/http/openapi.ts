// The OpenAPI 3.1.1 document served at GET /openapi.json (tickd-protocol(7) HTTP INTERFACE).
// It describes exactly what lib/http serves, for the running configuration: with an auth_file
// every data route carries the bearer security requirement and its 401/403 answers; without
// one the interface is open and the document says so by omitting them. GET /cluster and its
// schemas appear only in cluster mode, where the route exists. HEAD is served for every GET
// route (Node drops the body), so it is documented too.
import type { JsonValue } from './json.ts';
import { SCHEMAS } from './openapi-schemas.ts';
import { MAX_BODY_BYTES } from './body.ts';
import { DEFAULT_PAGE_ENTRIES } from './list-page.ts';
import { MAX_PAGE_ENTRIES } from '../domain/page.ts';

type Obj = { [key: string]: JsonValue };

export interface OpenApiOptions {
  readonly version: string;
  /** true when an auth_file is configured. */
  readonly auth: boolean;
  /** true when the daemon runs with --cluster. */
  readonly cluster: boolean;
}

const json = (schema: JsonValue): Obj => ({ 'application/json': { schema } });
const ref = (name: string): Obj => ({ $ref: `#/components/schemas/${name}` });
const response = (description: string, schema?: JsonValue, headers?: Obj): Obj =>
  ({ description, ...(schema !== undefined && { content: json(schema) }), ...(headers !== undefined && { headers }) });
const error = (description: string, headers?: Obj): Obj => response(description, ref('Error'), headers);

const RESPONSES: Obj = {
  BadRequest: error('Invalid request: malformed JSON, or a missing or invalid field or parameter (the message names it).'),
  Unauthorized: error('Missing or unknown bearer token. Body {"error":"unauthorized"}.', {
    'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string' } },
  }),
  Forbidden: error('The identifier (or a rule\'s pattern) lies outside the token\'s namespace. Body {"error":"insufficient namespace scope"}.'),
  NotFound: error('No such job or rule, e.g. {"error":"job \\"x\\" does not exist"}.'),
  PayloadTooLarge: error(`The request body exceeds ${MAX_BODY_BYTES} bytes.`),
  UnsupportedMediaType: error('The request body is not `application/json` (a utf-8 charset parameter is allowed).'),
  Internal: error('Server error. Body {"error":"internal"}.'),
};

const use = (name: string): Obj => ({ $ref: `#/components/responses/${name}` });

interface Op {
  readonly id: string;
  readonly summary: string;
  readonly params?: readonly string[];
  readonly body?: string;
  readonly ok: Obj;
  /** Error responses besides 401 and 500, which every authenticated operation has. */
  readonly errors: Readonly<Record<string, string>>;
  readonly open?: boolean;
}

function operation(op: Op, auth: boolean): Obj {
  const responses: Obj = { ...op.ok };
  for (const [status, name] of Object.entries(op.errors)) {
    if (auth || status !== '403') responses[status] = use(name);
  }
  if (op.open !== true && auth) responses['401'] = use('Unauthorized');
  // Any handler failure is answered 500, open routes included.
  responses['500'] = use('Internal');
  return {
    operationId: op.id,
    summary: op.summary,
    ...(op.params !== undefined && { parameters: op.params.map((p) => ({ $ref: `#/components/parameters/${p}` })) }),
    ...(op.body !== undefined && { requestBody: { required: true, content: json(ref(op.body)) } }),
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
  return { ...get, operationId: `${String(get['operationId'])}Head`, summary: `${String(get['summary'])} (headers only)`, responses };
}

const PAGE_HEADERS: Obj = {
  Link: {
    description: 'Present while more entries may follow: `<URL of the next page>; rel="next"` (RFC 8288). Follow it until it is absent. A page holds `limit` entries unless it is the last.',
    schema: { type: 'string' },
  },
};
const PAGE_NOTE = `Paged: at most \`limit\` entries (default ${DEFAULT_PAGE_ENTRIES}, at most ${MAX_PAGE_ENTRIES}) per response, in no particular order; a Link header names the next page. Entries present for a whole walk appear exactly once; ones created or deleted during it may or may not appear.`;
const listOk = (what: string, item: string): Obj => ({ '200': response(`${what}. ${PAGE_NOTE}`, { type: 'array', items: ref(item) }, PAGE_HEADERS) });
const LIST_PARAMS = ['Prefix', 'Limit', 'Cursor'];

const jobOk = { '200': response('The job.', ref('Job')) };
const ruleOk = { '200': response('The rule, runner in object form.', ref('Rule')) };
const deleted = { '204': { description: 'Deleted; no body.' } };
const ID_ERRORS = { '400': 'BadRequest', '403': 'Forbidden' };
const BODY_ERRORS = { ...ID_ERRORS, '413': 'PayloadTooLarge', '415': 'UnsupportedMediaType' };

function paths(auth: boolean, cluster: boolean): Obj {
  const get = (op: Op): Obj => { const o = operation(op, auth); return { get: o, head: head(o) }; };
  const put = (op: Op): Obj => operation(op, auth);
  const del = (op: Op): Obj => operation(op, auth);
  return {
    '/jobs': get({ id: 'listJobs', summary: 'List jobs (inside the token\'s namespace), optionally by identifier prefix', params: LIST_PARAMS, ok: listOk('Jobs', 'Job'), errors: { '400': 'BadRequest' } }),
    '/jobs/{id}': {
      parameters: [{ $ref: '#/components/parameters/JobId' }],
      put: put({ id: 'putJob', summary: 'Create or replace a job; it becomes planned at the given time', body: 'JobInput', ok: { '200': response('The job as stored (status planned).', ref('Job')) }, errors: BODY_ERRORS }),
      ...get({ id: 'getJob', summary: 'Read a job', ok: jobOk, errors: { ...ID_ERRORS, '404': 'NotFound' } }),
      delete: del({ id: 'deleteJob', summary: 'Delete a job', ok: deleted, errors: { ...ID_ERRORS, '404': 'NotFound' } }),
    },
    '/rules': get({ id: 'listRules', summary: 'List rules (inside the token\'s namespace), optionally by rule identifier prefix', params: LIST_PARAMS, ok: listOk('Rules', 'Rule'), errors: { '400': 'BadRequest' } }),
    '/rules/{id}': {
      parameters: [{ $ref: '#/components/parameters/RuleId' }],
      put: put({ id: 'putRule', summary: 'Create or replace a rule', body: 'RuleInput', ok: ruleOk, errors: BODY_ERRORS }),
      ...get({ id: 'getRule', summary: 'Read a rule', ok: ruleOk, errors: { ...ID_ERRORS, '404': 'NotFound' } }),
      delete: del({ id: 'deleteRule', summary: 'Delete a rule', ok: deleted, errors: { ...ID_ERRORS, '404': 'NotFound' } }),
    },
    '/stats': get({ id: 'getStats', summary: 'Service statistics (the TCP STAT values); allowed for any token', ok: { '200': response('The statistics.', ref('Stats')) }, errors: {} }),
    // Every node answers this one itself, whatever its role: no error of its own.
    ...(cluster && { '/cluster': get({ id: 'getCluster', summary: 'This node\'s view of its cluster; allowed for any token', ok: { '200': response('The answering node, its role, the leader, stream sequences and every node recently heard from.', ref('Cluster')) }, errors: {} }) }),
    '/health': get({ id: 'getHealth', summary: 'Liveness probe; no authentication', ok: { '200': response('Up.', ref('Health')) }, errors: {}, open: true }),
    '/openapi.json': get({ id: 'getOpenApi', summary: 'This document; no authentication', ok: { '200': response('The OpenAPI document.', { type: 'object' }) }, errors: {}, open: true }),
  };
}

// Only GET /cluster refers to these: without it they would be dead weight in the document.
const CLUSTER_SCHEMAS: ReadonlySet<string> = new Set(['Cluster', 'ClusterNode', 'NodeRole']);

const idParam = (kind: string, schema: string): Obj => ({
  name: 'id', in: 'path', required: true, schema: ref(schema),
  description: `The ${kind} identifier, percent-decoded before validation.`,
});

export function buildOpenApi(opts: OpenApiOptions): JsonValue {
  const description = [
    'HTTP JSON interface of tickd, a job scheduler. Same store as the TCP line protocol.',
    'Every error body is {"error": string}. A method not offered on a path answers 405 with an `Allow` header;',
    'an unknown path answers 404.',
    opts.auth
      ? 'Every route except /health and /openapi.json needs `Authorization: Bearer <secret>` with a secret from the token file; identifiers outside the token\'s namespace are refused (403) and lists are narrowed to it.'
      : 'No auth_file is configured: every route is open.',
  ].join(' ');
  return {
    openapi: '3.1.1',
    info: { title: 'tickd', version: opts.version, description, license: { name: 'MIT', identifier: 'MIT' } },
    paths: paths(opts.auth, opts.cluster),
    components: {
      schemas: opts.cluster ? SCHEMAS : Object.fromEntries(Object.entries(SCHEMAS).filter(([name]) => !CLUSTER_SCHEMAS.has(name))),
      responses: RESPONSES,
      parameters: {
        JobId: idParam('job', 'Identifier'),
        RuleId: idParam('rule', 'Identifier'),
        Prefix: { name: 'prefix', in: 'query', required: false, schema: ref('Pattern'), description: 'Only identifiers starting with this; absent or empty lists everything.' },
        Limit: { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_ENTRIES, default: DEFAULT_PAGE_ENTRIES }, description: 'Entries per page at most.' },
        Cursor: { name: 'cursor', in: 'query', required: false, schema: { type: 'string', pattern: '^[0-9]{1,10}$' }, description: 'Where the page starts: copy it from the previous page\'s Link header; treat it as opaque. It is only meaningful until the daemon restarts.' },
      },
      ...(opts.auth && { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A secret from the token file.' } } }),
    },
    ...(opts.auth && { security: [{ bearer: [] }] }),
  };
}
