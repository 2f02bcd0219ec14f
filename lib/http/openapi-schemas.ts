// JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of every body the HTTP interface reads or
// writes. They must stay exactly what lib/http/routes/*.ts do: the integration tests check
// real responses against them. Identifier rules: tickd-protocol(7) "Identifiers and patterns".
// Runners are discriminated on `type` with an explicit mapping from each kind to its schema:
// without one, tools fall back to the schema NAME as the value (openapi-typescript generated
// `type: "RunnerShell"`), which is not what the wire carries.
import { MAX_TAGS, TAG_PATTERN } from '../domain/node-tags.ts';
import { JOB_STATUSES } from '../domain/job.ts';
import { HTTP_METHODS, REDIS_COMMANDS, type RunnerType } from '../domain/runner-spec.ts';
import { STAT_KEYS } from '../domain/stat.ts';
import { MAX_IDENTIFIER_BYTES } from '../domain/identifier.ts';
import type { JsonValue } from './json.ts';
import { JOB_RETRY_PROPERTIES, RULE_OPTION_SCHEMAS, ruleOptionProperties } from './openapi-rule-options.ts';

type Schema = { readonly [key: string]: JsonValue };

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str: Schema = { type: 'string' };
const strings: Schema = { type: 'array', items: str };
/** JetStream stream sequences stay below 2^53: plain JSON numbers. */
const seq: Schema = { type: 'integer', minimum: 0 };

function object(required: readonly string[], properties: Record<string, JsonValue>, extra: Record<string, JsonValue> = {}): Schema {
  return { type: 'object', required: [...required], properties, ...extra };
}

/** Response objects are closed (nothing beyond the listed fields is ever written). */
const closed = (required: readonly string[], properties: Record<string, JsonValue>, extra: Record<string, JsonValue> = {}): Schema =>
  object(required, properties, { additionalProperties: false, ...extra });

/** A discriminated union over `type`: each kind's schema by name, and the mapping tools need. */
function discriminated(kinds: Readonly<Partial<Record<RunnerType, string>>>, description: string): Schema {
  const names = Object.values(kinds);
  return {
    type: 'object',
    description,
    oneOf: names.map(ref),
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(Object.entries(kinds).map(([kind, name]) => [kind, `#/components/schemas/${name}`])) },
  };
}

/** Responses: every kind, closed. */
const runnerOut = {
  RunnerShell: closed(['type', 'command'], { type: { const: 'shell' }, command: str }),
  RunnerDirect: closed(['type', 'executable', 'args'], { type: { const: 'direct' }, executable: str, args: strings }),
  RunnerHttp: closed(['type', 'method', 'url'], { type: { const: 'http' }, method: { enum: [...HTTP_METHODS] }, url: str }),
  RunnerAwf: closed(['type', 'workflow', 'inputs'], { type: { const: 'awf' }, workflow: str, inputs: strings }),
  RunnerAmqp: closed(['type', 'dsn', 'exchange', 'routing_key'], { type: { const: 'amqp' }, dsn: str, exchange: str, routing_key: str }),
  RunnerRedis: closed(['type', 'url', 'command', 'key'], { type: { const: 'redis' }, url: str, command: { enum: [...REDIS_COMMANDS] }, key: str }),
};

/** Requests: the four kinds HTTP can set; other fields are ignored (open objects). */
const runnerIn = {
  RunnerShellInput: object(['type', 'command'], { type: { const: 'shell' }, command: str }),
  RunnerDirectInput: object(['type', 'executable'], { type: { const: 'direct' }, executable: str, args: { ...strings, default: [] } }),
  RunnerHttpInput: object(['type', 'method', 'url'], { type: { const: 'http' }, method: { enum: [...HTTP_METHODS] }, url: { type: 'string', pattern: '^https?://' } }),
  RunnerAwfInput: object(['type', 'workflow'], { type: { const: 'awf' }, workflow: str, inputs: { type: 'array', items: { type: 'string', pattern: '^[^=]+=' }, default: [] } }),
};

/** Nanosecond integers exceed 2^53: how to read them (also said once in info.description). */
const EXACT = 'Written as an exact integer; past 2^53 an IEEE-754 double (JavaScript\'s JSON.parse, many JSON libraries) rounds it, so parse it as a 64-bit integer.';

const statProperties: Record<string, JsonValue> = {};
for (const key of STAT_KEYS) {
  statProperties[key] = { type: 'integer', minimum: 0 };
}
statProperties['persistence'] = { enum: ['logfile', 'memory'] };
statProperties['compression'] = { enum: ['idle', 'running', 'success', 'failure'] };
statProperties['auth_enabled'] = { type: 'integer', enum: [0, 1], description: '1 when an auth_file is configured.' };
statProperties['tls_enabled'] = { type: 'integer', enum: [0, 1], description: '1 when the TCP interface uses TLS.' };
statProperties['uptime_ns'] = { type: 'integer', format: 'int64', minimum: 0, description: `Nanoseconds since startup. ${EXACT}` };

export const SCHEMAS: Record<string, Schema> = {
  Error: closed(['error'], { error: { type: 'string', description: 'A human-readable message; for 400 it names the offending field.' } }),
  Identifier: {
    type: 'string', minLength: 1, maxLength: MAX_IDENTIFIER_BYTES, pattern: '^[A-Za-z0-9._:-]+$',
    description: 'ASCII letters, digits and . - _ : (1 to 1024 bytes).',
  },
  Pattern: {
    type: 'string', maxLength: MAX_IDENTIFIER_BYTES, pattern: '^[A-Za-z0-9._:-]*$',
    description: 'An identifier prefix; the empty pattern matches every job.',
  },
  Job: closed(['id', 'status', 'execution', 'attempt'], {
    id: ref('Identifier'),
    status: { enum: [...JOB_STATUSES] },
    execution: { type: 'integer', format: 'int64', description: `Nanoseconds since the Unix epoch. ${EXACT}` },
    ...JOB_RETRY_PROPERTIES,
  }),
  JobInput: object(['execution'], {
    execution: {
      type: 'string', format: 'date-time', examples: ['2026-04-10T12:00:00Z', '2026-04-10T14:00:00.123456789+02:00'],
      description: 'ISO 8601 / RFC 3339 datetime with Z or a numeric offset (offsets honoured, up to 9 fraction digits). No zone is rejected.',
    },
  }, { description: 'Other fields are ignored.' }),
  ...runnerOut,
  Runner: discriminated(
    { shell: 'RunnerShell', direct: 'RunnerDirect', http: 'RunnerHttp', awf: 'RunnerAwf', amqp: 'RunnerAmqp', redis: 'RunnerRedis' },
    'A runner, always in object form in responses (all six kinds), told apart by `type`.',
  ),
  ...runnerIn,
  RunnerInput: discriminated(
    { shell: 'RunnerShellInput', direct: 'RunnerDirectInput', http: 'RunnerHttpInput', awf: 'RunnerAwfInput' },
    'Object form of a runner, told apart by `type`. amqp and redis runners can only be set over TCP (400).',
  ),
  RuleInput: {
    type: 'object',
    description: 'A rule to store. The runner is given in object form, or in string form: `runner` names the kind and `args` carries its arguments (http: [method, url]; awf: [workflow, "--input", "key=value", ...]; shell: [command]; direct: [executable, ...arguments]). Both forms are equally authoritative. `retry`, `concurrency`, `rate` and `on` are optional: without them a job runs once, with no limit, on any node. An `id`, if present, must equal the path id; any other field is refused (400 naming it).',
    // The options beside the two forms, not inside each: members both alternatives declare
    // alike make linters call the oneOf ambiguous.
    properties: ruleOptionProperties(true),
    oneOf: [
      // `args: false`: no args beside an object-form runner (the string form's field).
      object(['pattern', 'runner'], { id: ref('Identifier'), pattern: ref('Pattern'), runner: ref('RunnerInput'), args: false }),
      object(['pattern', 'runner', 'args'], { id: ref('Identifier'), pattern: ref('Pattern'), runner: { enum: ['shell', 'direct', 'http', 'awf'] }, args: { ...strings, minItems: 1 } }),
    ],
  },
  Rule: closed(['id', 'pattern', 'runner'], { id: ref('Identifier'), pattern: ref('Pattern'), runner: ref('Runner'), ...ruleOptionProperties(false) }, {
    description: 'A rule; `retry`, `concurrency`, `rate` and `on` only when it has them.',
  }),
  ...RULE_OPTION_SCHEMAS,
  Stats: closed([...STAT_KEYS], statProperties, { description: 'The 15 STAT values of the TCP interface, in the same order; numbers are exact integers.' }),
  Health: closed(['status'], { status: { const: 'ok' } }),
  Ready: closed(['status'], { status: { const: 'ready' } }),
  WhoAmI: closed(['name', 'namespace', 'auth_enabled'], {
    name: { type: ['string', 'null'], description: 'The token\'s name (its `[token.<name>]` section); null when no auth_file is configured.' },
    namespace: { type: 'string', minLength: 1, description: 'The identifier prefix the token may see and change; `*` for every identifier (always `*` without an auth_file).' },
    auth_enabled: { type: 'boolean', description: 'Whether an auth_file is configured (false: every call is open, no token is needed).' },
  }, { description: 'The token behind a request; never its secret.' }),
  ClusterNode: closed(['name', 'role', 'applied_seq', 'lag', 'seen_ago_ms', 'format'], {
    name: str,
    role: ref('NodeRole'),
    applied_seq: { ...seq, description: 'The last stream sequence this node has applied (the leader: written and acknowledged).' },
    lag: { type: 'integer', minimum: 0, description: 'last_seq minus this node\'s applied_seq.' },
    seen_ago_ms: { type: 'integer', minimum: 0, description: 'Milliseconds since the node last reported how it stands (it does so about every second).' },
    format: { type: 'integer', minimum: 1, description: 'The record format the node\'s tickd reads (tickd(8) UPGRADING); 1 for a tickd older than formats, which does not say.' },
    executor: closed(['tags', 'capacity', 'running'], {
      tags: { type: 'array', items: { type: 'string', pattern: TAG_PATTERN }, maxItems: MAX_TAGS, description: 'The node\'s tags (--node-tags): a rule\'s `on` runs its jobs only on nodes having every one.' },
      capacity: { type: 'integer', minimum: 1, description: 'Executions the node runs at once (its --max-inflight).' },
      running: { type: 'integer', minimum: 0, description: 'Executions running on the node, as it last said.' },
    }, { description: 'What the node runs of the cluster\'s jobs (tickd(8) CLUSTER MODE, "Where jobs run"); absent for a node of a tickd that runs only its own.' }),
  }),
  Cluster: closed(['cluster', 'node', 'role', 'leader', 'last_seq', 'applied_seq', 'nodes', 'format', 'active_format', 'upgrade_needed'], {
    cluster: { type: 'string', description: 'The cluster\'s name.' },
    node: { type: 'string', description: 'The name of the node that answered.' },
    role: ref('NodeRole'),
    leader: { anyOf: [str, { type: 'null' }], description: 'The leader\'s node name; null while no node holds the lease.' },
    last_seq: { ...seq, description: 'The stream\'s last sequence as this node knows it.' },
    applied_seq: { ...seq, description: 'The last stream sequence this node has applied.' },
    nodes: { type: 'array', items: ref('ClusterNode'), description: 'Every node heard from in the last few seconds, the answering one included, by name.' },
    format: { type: 'integer', minimum: 1, description: 'The record format this node\'s tickd reads.' },
    active_format: { type: 'integer', minimum: 1, description: 'The cluster\'s active format: the highest that every node reads, as the leader records it in the stream once every node heard from has read it for 30 s; 1 until then. Records that need a higher format are not written, so every node reads the stream (tickd(8) UPGRADING).' },
    upgrade_needed: {
      anyOf: [closed(['format', 'seq', 'subject'], {
        format: { type: 'integer', minimum: 1, description: 'The format the record needs.' },
        seq: seq,
        subject: str,
      }), { type: 'null' }],
      description: 'Set once this node met a record in the stream that only a newer tickd reads: it applies nothing after it, never leads, and serves what it has; upgrade it. null otherwise.',
    },
    placement: closed(['waiting', 'placed'], {
      waiting: { type: 'integer', minimum: 0, description: 'Executions waiting for a live node having the tags their rule requires.' },
      placed: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 }, description: 'Executions sent to each node (by name) whose results have not come yet.' },
    }, { description: 'The leader\'s placement of executions (on the leader only; tickd(8) CLUSTER MODE, "Where jobs run").' }),
  }, { description: 'One node\'s view of its cluster (cluster mode, NATS JetStream).' }),
  NodeRole: { enum: ['leader', 'follower'] },
};
