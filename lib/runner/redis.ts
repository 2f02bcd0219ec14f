// The redis runner (tickd-protocol(7) RUNNERS): per execution, a new connection to the URL,
// AUTH and SELECT as the URL says, `<COMMAND> <key> <job id>`, then close. A RESP error reply
// (WRONGTYPE, WRONGPASS, ...) is failure.
//
// The command goes in a MULTI/EXEC transaction with its companion (redis-companion.ts: the
// keys to deduplicate on, on `<key>:tickd`), so a consumer never sees the one without the
// other. Only the command's own reply decides the outcome: a companion that fails as it runs
// changes nothing, and a transaction refused as a whole (an ACL that allows the key and not
// its companion, a server without MULTI) is followed by the command alone, as before.
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
// - Credentials never reach a log line or an outcome: the URL is logged through redactUrl and
//   error texts are scrubbed of the password.
// - The outcome (lib/domain/attempt.ts): `delivered` once the command is answered, else the
//   error (refused connection, WRONGPASS, WRONGTYPE...) or no answer in time. Failures are
//   logged at debug only: the engine logs the one warning of a failed job.
import { createClient, ErrorReply, MultiErrorReply } from 'redis';
import { clipHead, type AttemptOutcome } from '../domain/attempt.ts';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import { isRedisCommand, parseRedisUrl } from '../domain/runner-validate.ts';
import { raceDeadline } from './deadline.ts';
import { ABORTED, runnerError, type Execution, type RunnerContext } from './execution.ts';
import { executionKeys } from './execution-key.ts';
import { companionCommands, companionRecord } from './redis-companion.ts';
import { redactUrl, scrubSecrets } from './redact.ts';
import { errorText } from '../errors.ts';

type RedisSpec = Extract<RunnerSpec, { type: 'redis' }>;

const DELIVERED: AttemptOutcome = Object.freeze({ kind: 'delivered' });

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

export function runRedis(exec: Execution, spec: RedisSpec, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  const where = redactUrl(spec.url);
  const parsed = parseRedisTarget(spec.url);
  if (!parsed.ok) {
    ctx.log.debug({ url: where }, `redis runner: ${parsed.error}`);
    return Promise.resolve(runnerError(parsed.error));
  }
  // The spec lists the commands case-sensitively; anything else (an old logfile) fails the job.
  if (!isRedisCommand(spec.command)) {
    ctx.log.debug({ url: where }, 'redis runner: unsupported command');
    return Promise.resolve(runnerError(`unsupported redis command ${JSON.stringify(spec.command)}`));
  }
  if (signal.aborted) return Promise.resolve(ABORTED);
  const target = parsed.target;
  const scrub = (err: unknown) => scrubSecrets(errorText(err), [target.password]);

  let client: ReturnType<typeof makeClient>;
  try {
    client = makeClient(target, ctx.timeoutMs);
  } catch (err) {
    ctx.log.debug({ url: where, err: scrub(err) }, 'redis runner could not create a client');
    return Promise.resolve(runnerError(`redis runner could not create a client: ${scrub(err)}`));
  }
  client.on('error', (err: unknown) => ctx.log.debug({ url: where, err: scrub(err) }, 'redis client error'));
  const close = () => {
    try { client.destroy(); } catch { /* already torn down */ }
  };

  const command = [spec.command, spec.key, exec.jobId];
  const companion = companionCommands(spec.command, spec.key, companionRecord(exec, executionKeys(exec)));
  const send = async (): Promise<void> => {
    await client.connect();
    const multi = client.multi().addCommand(command);
    for (const c of companion) multi.addCommand(c);
    try {
      await multi.exec();
    } catch (err) {
      if (err instanceof MultiErrorReply) {
        // It ran: the command's reply is the outcome, a companion's error only a debug line.
        if (err.errorIndexes.includes(0)) throw err.replies[0];
        ctx.log.debug({ url: where, err: scrub(err.replies[err.errorIndexes[0]!]) }, 'redis runner: the companion failed');
        return;
      }
      if (!(err instanceof ErrorReply)) throw err;
      ctx.log.debug({ url: where, err: scrub(err) }, 'redis runner: transaction refused, sending the command alone');
      await client.sendCommand(command);
    }
  };

  let abandoned = false;
  const work = send().then(
    (): AttemptOutcome => {
      ctx.log.debug({ url: where, command: spec.command }, 'redis command done');
      return DELIVERED;
    },
    (err: unknown): AttemptOutcome => {
      const error = scrub(err);
      if (!abandoned) ctx.log.debug({ url: where, command: spec.command, err: error }, 'redis runner failed');
      return { kind: 'broker_error', error: clipHead(error) };
    },
  ).finally(close);

  return raceDeadline(work, 2 * ctx.timeoutMs, signal, (reason) => {
    abandoned = true;
    if (reason === 'timeout') ctx.log.debug({ url: where, timeoutMs: 2 * ctx.timeoutMs }, 'redis runner timed out');
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
