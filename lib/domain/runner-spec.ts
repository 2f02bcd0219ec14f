// The six runner kinds, as stored in rules and in the logfile. The field names are the
// HTTP object form's (decisions §8); TCP and the logfile map to and from this one shape.

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
