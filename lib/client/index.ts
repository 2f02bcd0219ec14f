// tickd's Node client (doc/client.md): `import { connect } from 'tickd'`. It speaks the TCP
// protocol (tickd-protocol(7)) and runs on Node 20 and later: nothing here may load the
// daemon, or use what Node 20 lacks.
import { Client as ClientBase } from './client.ts';
import { setMany, type JobEntry, type SetManyOptions, type SetManyResult } from './bulk.ts';
import { readOptions, type ClientOptions } from './options.ts';

export class Client extends ClientBase {
  /**
   * Many SETs pipelined from an iterable or async iterable, read as fast as the daemon
   * answers (backpressure): a bulk import. Resolves with the counts once every SET is answered.
   */
  setMany(entries: Iterable<JobEntry> | AsyncIterable<JobEntry>, opts?: SetManyOptions): Promise<SetManyResult> {
    return setMany(this, this.settings.maxInflight, entries, opts);
  }

  /** @internal connect() is the way in. */
  static async open(options: ClientOptions): Promise<Client> {
    const client = new Client(readOptions(options));
    await client.start();
    return client;
  }
}

/**
 * A client connected to the first address that accepts (after AUTH, with a token). Rejects
 * with a ConnectionError (or AuthError) when none does; later losses are reconnected.
 */
export function connect(options: ClientOptions = {}): Promise<Client> {
  return Client.open(options);
}

export type { ClientOptions, TlsOption, Endpoint } from './options.ts';
export { defaultRetryStrategy } from './options.ts';
export type { ClientStatus } from './core.ts';
export type { CallOptions } from './pending.ts';
export type { Listing } from './requests.ts';
export type { Job, JobStatus, Attempt } from './replies.ts';
export type { Rule, RuleInput, RetryInput, Duration, RunnerSpec, RetryPolicy, RateLimit } from './rules.ts';
export type { Schedule, ScheduleInput, Occurrence } from './schedules.ts';
export type { JobEntry, SetManyOptions, SetManyResult };
export { TickdError, ReplyError, ConnectionError, MaybeAppliedError, TimeoutError, AbortError, ClosedError, AuthError, ProtocolError } from './errors.ts';
export { nsFromDate, dateFromNs, nsFromIso, isoFromNs, toNs, nowNs, type When } from './time.ts';
