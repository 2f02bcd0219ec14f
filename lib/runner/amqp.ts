// The amqp runner (tickd-protocol(7) RUNNERS): per execution, a new connection from the DSN, a
// confirm channel, one message whose body is the job identifier published to `exchange` with
// `routing_key`, the broker's confirm awaited, then close. Success = the broker confirmed.
// The message id is the execution key, and the headers tickd-job and tickd-attempt say whose
// attempt it is (doc/execution.md "Keys to deduplicate on").
//
// Invariants:
// - Never rejects and never leaves an unhandled 'error' event: amqplib emits 'error' on the
//   connection model and on channels (a missing exchange closes the channel with 404), and an
//   unhandled one would crash the whole primary. Listeners are attached before any frame can
//   reach the emitter (for the channel, through guardFreshChannels).
// - The DSN is parsed by parseAmqpDsn, the parser `RULE SET` validates with, so execution
//   accepts exactly what a rule could store; one that fails (an old logfile) fails the job.
//   Added here: no userinfo -> guest:guest, and the vhost re-encoded for amqplib.
// - Time: the connect/handshake is bounded by the socket timeout (ctx.timeoutMs); the whole
//   attempt by 2 x ctx.timeoutMs (amqplib drops the socket timeout once the connection is
//   open, so channel open, publish and confirm need their own bound).
// - Credentials never reach a log line or an outcome: the DSN is logged through redactUrl and
//   error texts are scrubbed of the password.
// - The outcome (lib/domain/attempt.ts): `delivered` once confirmed, else the broker's error
//   (the channel's reason when there is one: 404 NOT_FOUND for a missing exchange), or no answer
//   in time. Failures are logged at debug only: the engine logs the one warning of a failed job.
import { parseOccurrenceId } from '../schedule/occurrence.ts';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { connect, type ChannelModel } from 'amqplib';
import { clipHead, type AttemptOutcome } from '../domain/attempt.ts';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import { parseAmqpDsn } from '../domain/runner-validate.ts';
import { raceDeadline } from './deadline.ts';
import { ABORTED, runnerError, type Execution, type RunnerContext } from './execution.ts';
import { executionKeys } from './execution-key.ts';
import { redactUrl, scrubSecrets } from './redact.ts';
import { errorText } from '../errors.ts';

type AmqpSpec = Extract<RunnerSpec, { type: 'amqp' }>;

const DELIVERED: AttemptOutcome = Object.freeze({ kind: 'delivered' });

export interface AmqpTarget {
  hostname: string;
  port: number;
  username: string;
  password: string;
  /** Decoded virtual host name. */
  vhost: string;
  /** The vhost percent-encoded again: amqplib's object form unescapes it once itself. */
  vhostEncoded: string;
}

export type AmqpTargetResult = { ok: true; target: AmqpTarget } | { ok: false; error: string };

/** The connection target for a DSN: parseAmqpDsn's parts plus what execution adds. */
export function parseAmqpTarget(dsn: string): AmqpTargetResult {
  const parts = parseAmqpDsn(dsn);
  if (typeof parts === 'string') return { ok: false, error: parts };
  let vhostEncoded: string;
  try {
    vhostEncoded = encodeURIComponent(parts.vhost);
  } catch {
    // Only a lone surrogate makes this throw, which a decoded URL path cannot hold; kept so
    // that a surprise fails the job instead of throwing out of runAmqp.
    return { ok: false, error: 'amqp dsn vhost cannot be encoded' };
  }
  // Any userinfo, even `u@` or `:p@`, replaces the default pair: the missing half is empty.
  const hasUserinfo = parts.user !== undefined || parts.password !== undefined;
  return {
    ok: true,
    target: {
      hostname: parts.host,
      port: parts.port,
      username: hasUserinfo ? parts.user ?? '' : 'guest',
      password: hasUserinfo ? parts.password ?? '' : 'guest',
      vhost: parts.vhost,
      vhostEncoded,
    },
  };
}

/** Kills the connection's socket: no close handshake with a broker that may not answer. */
function destroyConnection(model: ChannelModel): void {
  // amqplib's typings hide the raw connection's `stream` (the socket); it is the only way to
  // tear a connection down without waiting on the broker.
  const raw = model.connection as unknown as { stream?: Socket };
  raw.stream?.destroy(new Error('tickd gave up on the attempt'));
}

/**
 * amqplib hands the channel over only after its open handshake, yet a broker closing it during
 * that handshake emits 'error' on it, which, unheard, would crash the process. The channel is
 * registered on the raw connection synchronously by createConfirmChannel(), before any frame
 * can arrive: attach the listener there. (Internal structure of amqplib 2.x; if it ever
 * changes this finds nothing and the caller's fallback attaches after the handshake.)
 */
function guardFreshChannels(model: ChannelModel, onError: (err: unknown) => void): void {
  const raw = model.connection as unknown as { channels?: unknown };
  if (!Array.isArray(raw.channels)) return;
  for (const slot of raw.channels as unknown[]) {
    const channel = (slot as { channel?: unknown } | null)?.channel;
    if (channel instanceof EventEmitter && channel.listenerCount('error') === 0) channel.on('error', onError);
  }
}

/** Closes politely (connection.close handshake), falling back to a kill if the broker is slow. */
function closeConnection(model: ChannelModel, graceMs: number): void {
  const timer = setTimeout(() => destroyConnection(model), graceMs);
  timer.unref();
  model.close().then(
    () => clearTimeout(timer),
    () => { clearTimeout(timer); destroyConnection(model); },
  );
}

export function runAmqp(exec: Execution, spec: AmqpSpec, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  const where = redactUrl(spec.dsn);
  const parsed = parseAmqpTarget(spec.dsn);
  if (!parsed.ok) {
    ctx.log.debug({ dsn: where }, `amqp runner: ${parsed.error}`);
    return Promise.resolve(runnerError(parsed.error));
  }
  if (signal.aborted) return Promise.resolve(ABORTED);
  const target = parsed.target;
  const scrub = (err: unknown) => scrubSecrets(errorText(err), [target.password]);
  const keys = executionKeys(exec);

  let model: ChannelModel | undefined;
  let abandoned = false;
  // The broker's reason (e.g. 404 NOT_FOUND for a missing exchange) arrives as a channel
  // 'error'; the publish callback then only sees "channel closed". Keep the better one.
  let channelError: unknown;

  const publish = async (): Promise<AttemptOutcome> => {
    const opened = await connect(
      {
        protocol: 'amqp',
        hostname: target.hostname,
        port: target.port,
        username: target.username,
        password: target.password,
        vhost: target.vhostEncoded,
        // Short-lived connection: heartbeats would only keep timers alive after a teardown.
        heartbeat: 0,
      },
      { timeout: ctx.timeoutMs, clientProperties: { connection_name: 'tickd runner' } },
    );
    opened.on('error', (err: unknown) => ctx.log.debug({ dsn: where, err: scrub(err) }, 'amqp connection error'));
    if (abandoned) {
      destroyConnection(opened);
      return ABORTED; // ignored: the deadline has answered already
    }
    model = opened;
    const recordChannelError = (err: unknown) => { channelError = err; };
    const opening = opened.createConfirmChannel();
    guardFreshChannels(opened, recordChannelError);
    const channel = await opening;
    if (channel.listenerCount('error') === 0) channel.on('error', recordChannelError);
    await new Promise<void>((resolve, reject) => {
      channel.publish(spec.exchange, spec.routing_key, Buffer.from(exec.jobId, 'utf8'), { persistent: true, messageId: keys.key, headers: messageHeaders(exec.jobId, keys.attemptNo) }, (err: unknown) => {
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else resolve();
      });
    });
    // The message is confirmed: the outcome is success whatever the close does.
    closeConnection(opened, ctx.timeoutMs);
    return DELIVERED;
  };

  const work = publish().then(
    (outcome): AttemptOutcome => {
      if (outcome === DELIVERED) ctx.log.debug({ dsn: where, exchange: spec.exchange }, 'amqp message confirmed');
      return outcome;
    },
    (err: unknown): AttemptOutcome => {
      const error = scrub(channelError ?? err);
      if (!abandoned) ctx.log.debug({ dsn: where, exchange: spec.exchange, err: error }, 'amqp runner failed');
      if (model && !abandoned) closeConnection(model, ctx.timeoutMs);
      return { kind: 'broker_error', error: clipHead(error) };
    },
  );

  return raceDeadline(work, 2 * ctx.timeoutMs, signal, (reason) => {
    abandoned = true;
    if (reason === 'timeout') ctx.log.debug({ dsn: where, timeoutMs: 2 * ctx.timeoutMs }, 'amqp runner timed out');
    if (model) destroyConnection(model);
  });
}

/**
 * tickd-job and tickd-attempt on every message (the execution key is its message id), and for a
 * schedule's occurrence which and its nominal time (tickd-protocol(7) SCHEDULES).
 */
function messageHeaders(jobId: string, attemptNo: number): Record<string, string | number> {
  const headers: Record<string, string | number> = { 'tickd-job': jobId, 'tickd-attempt': attemptNo };
  const occurrence = parseOccurrenceId(jobId);
  if (occurrence !== null) {
    headers['tickd-schedule'] = occurrence.schedule;
    headers['tickd-nominal-time'] = occurrence.nominal.toString();
  }
  return headers;
}
