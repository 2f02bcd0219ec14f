// The six runner kinds, as stored in rules and in the logfile. The field names are the
// HTTP object form's (tickd-protocol(7) HTTP INTERFACE); TCP and the logfile map to and from
// this one shape, and runnerToJson writes it out as JSON for both the HTTP API and
// `tickd dump --format json`.

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const REDIS_COMMANDS = ['PUBLISH', 'RPUSH', 'LPUSH', 'SET'] as const;
export type RedisCommand = (typeof REDIS_COMMANDS)[number];

export type RunnerSpec =
  | { type: 'shell'; command: string }
  | { type: 'direct'; executable: string; args: string[] }
  | { type: 'http'; method: HttpMethod; url: string }
  | { type: 'awf'; workflow: string; inputs: string[] }
  | { type: 'amqp'; dsn: string; exchange: string; routing_key: string }
  | { type: 'redis'; url: string; command: RedisCommand; key: string };

export type RunnerType = RunnerSpec['type'];
export const RUNNER_TYPES: readonly RunnerType[] = ['shell', 'direct', 'http', 'awf', 'amqp', 'redis'];

/** The kinds whose runner is a module of its own (a client library), loaded only for a rule that uses it. */
export type NetworkKind = Extract<RunnerType, 'http' | 'amqp' | 'redis'>;
const NETWORK_KINDS: readonly NetworkKind[] = ['http', 'amqp', 'redis'];

/** Which of `types` are network kinds, in a fixed order. */
export function networkKinds(types: ReadonlySet<RunnerType>): NetworkKind[] {
  return NETWORK_KINDS.filter((k) => types.has(k));
}

/**
 * The JSON object form of any runner (tickd-protocol(7) HTTP INTERFACE): `type` first, then
 * the kind's fields in a fixed order, arrays copied. The one shape runners take in HTTP
 * responses and in dump output.
 */
export function runnerToJson(spec: RunnerSpec): RunnerSpec {
  switch (spec.type) {
    case 'shell': return { type: spec.type, command: spec.command };
    case 'direct': return { type: spec.type, executable: spec.executable, args: [...spec.args] };
    case 'http': return { type: spec.type, method: spec.method, url: spec.url };
    case 'awf': return { type: spec.type, workflow: spec.workflow, inputs: [...spec.inputs] };
    case 'amqp': return { type: spec.type, dsn: spec.dsn, exchange: spec.exchange, routing_key: spec.routing_key };
    case 'redis': return { type: spec.type, url: spec.url, command: spec.command, key: spec.key };
    default: {
      const never: never = spec;
      return never;
    }
  }
}
