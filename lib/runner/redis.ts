// The redis runner (tickd-protocol(7) RUNNERS): per execution, a new connection to the URL,
// AUTH and SELECT as the URL says, `<COMMAND> <key> <job id>`, then close. A RESP error reply
// (WRONGTYPE, WRONGPASS, ...) is failure.
//
// Invariants:
// - The URL is parsed by parseRedisUrl, the parser `RULE SET` validates with, so execution
//   accepts exactly what a rule could store; one that fails (an old logfile) fails the job.
//   node-redis then sends, over RESP2, `AUTH <password>` when only a password is given,
//   `AUTH <user> <password>` when a user is (an absent password is sent as ""), and
//   `SELECT <db>` when db is not 0, all before our command.
// - No reconnection (reconnectStrategy false): a down server fails the attempt at once. An
//   'error' listener is always attached (node-redis emits 'error' and would crash otherwise).
// - Time: connectTimeout, socketTimeout (idle) and the command timeout are ctx.timeoutMs
//   (node-redis's own command timeout defaults to 5 s); the whole attempt is bounded by
//   2 x ctx.timeoutMs.
// - Credentials never reach a log line: the URL is logged through redactUrl and error texts
//   are scrubbed of the password.
import { createClient } from 'redis';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import { isRedisCommand, parseRedisUrl } from '../domain/runner-validate.ts';
import { raceDeadline } from './deadline.ts';
import { errorText, type Execution, type RunnerContext } from './execution.ts';
import { redactUrl, scrubSecrets } from './redact.ts';

type RedisSpec = Extract<RunnerSpec, { type: 'redis' }>;

export interface RedisTarget {
  host: string;
  port: number;
  username: string | undefined;
  password: string | undefined;
  /** 0 when the URL names none (node-redis then sends no SELECT). */
  database: number;
}

export type RedisTargetResult = { ok: true; target: RedisTarget } | { ok: false; error: string };

/** The connection target for a URL: parseRedisUrl's parts in node-redis's terms. */
export function parseRedisTarget(url: string): RedisTargetResult {
  const parts = parseRedisUrl(url);
  if (typeof parts === 'string') return { ok: false, error: parts };
  return {
    ok: true,
    target: { host: parts.host, port: parts.port, username: parts.username, password: parts.password, database: parts.db ?? 0 },
  };
}

export function runRedis(exec: Execution, spec: RedisSpec, ctx: RunnerContext, signal: AbortSignal): Promise<boolean> {
  const where = redactUrl(spec.url);
  const parsed = parseRedisTarget(spec.url);
  if (!parsed.ok) {
    ctx.log.warn({ url: where }, `redis runner: ${parsed.error}`);
    return Promise.resolve(false);
  }
  // The spec lists the commands case-sensitively; anything else (an old logfile) fails the job.
  if (!isRedisCommand(spec.command)) {
    ctx.log.warn({ url: where }, 'redis runner: unsupported command');
    return Promise.resolve(false);
  }
  if (signal.aborted) return Promise.resolve(false);
  const target = parsed.target;
  const scrub = (err: unknown) => scrubSecrets(errorText(err), [target.password]);

  let client: ReturnType<typeof makeClient>;
  try {
    client = makeClient(target, ctx.timeoutMs);
  } catch (err) {
    ctx.log.warn({ url: where, err: scrub(err) }, 'redis runner could not create a client');
    return Promise.resolve(false);
  }
  client.on('error', (err: unknown) => ctx.log.debug({ url: where, err: scrub(err) }, 'redis client error'));
  const close = () => {
    try { client.destroy(); } catch { /* already torn down */ }
  };

  const send = async (): Promise<boolean> => {
    await client.connect();
    await client.sendCommand([spec.command, spec.key, exec.jobId]);
    return true;
  };

  let abandoned = false;
  const work = send().then(
    () => {
      ctx.log.debug({ url: where, command: spec.command }, 'redis command done');
      return true;
    },
    (err: unknown) => {
      if (!abandoned) ctx.log.warn({ url: where, command: spec.command, err: scrub(err) }, 'redis runner failed');
      return false;
    },
  ).finally(close);

  return raceDeadline(work, 2 * ctx.timeoutMs, signal, (reason) => {
    abandoned = true;
    if (reason === 'timeout') ctx.log.warn({ url: where, timeoutMs: 2 * ctx.timeoutMs }, 'redis runner timed out');
    close();
  });
}

function makeClient(target: RedisTarget, timeoutMs: number) {
  return createClient({
    socket: {
      host: target.host,
      port: target.port,
      connectTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      reconnectStrategy: false,
    },
    username: target.username,
    password: target.password,
    database: target.database,
    RESP: 2,
    disableClientInfo: true,
    maintNotifications: 'disabled',
    commandOptions: { timeout: timeoutMs },
  });
}
