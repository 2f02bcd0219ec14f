// How the lease tells apart the failures it meets. Callers branch on these predicates, never
// on message text: a compare-and-set that lost its race (the key's last revision is not the
// one the write expected) is normal while waiting and fatal while holding; anything else
// (timeouts, no JetStream, a closed connection) is "NATS is not answering" and is only
// logged, once per kind, by whoever keeps retrying.
import { errorText } from '../errors.ts';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';

/** acquire() gave up because its `stopped()` said so, or the lease was closed meanwhile. */
export class LeaseAbortedError extends Error {
  readonly code = 'ERR_LEASE_ABORTED';
  constructor() {
    super('lease acquisition aborted: stopping');
    this.name = 'LeaseAbortedError';
  }
}

export function isLeaseAborted(err: unknown): err is LeaseAbortedError {
  return err instanceof LeaseAbortedError;
}

/**
 * The server refused a write that expected another last revision of the key. For create()
 * that means a live value exists (someone holds the lease); for update() and delete() by
 * revision it means someone else wrote the key, or it expired (the server then reports a
 * last sequence of 0). @nats-io/kv 3.4 surfaces both as JetStreamApiError 10071 (10164 on
 * newer servers when the sequence is unknown); create() itself already retries over a
 * delete marker, so a 10071 from it is always a live value.
 */
export function isWrongLastSequence(err: unknown): boolean {
  return err instanceof JetStreamApiError
    && (err.code === JetStreamApiCodes.StreamWrongLastSequence
      || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

/** A short stable name for an error's kind, e.g. `TimeoutError` or `JetStreamApiError/10071`. */
export function errorKind(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const code = (err as { code?: unknown }).code;
  return code === undefined ? err.name : `${err.name}/${String(code)}`;
}

/** One line for logs and onLost reasons: the error's kind before its text. */
export function describeError(err: unknown): string {
  return err instanceof Error ? `${errorKind(err)}: ${errorText(err)}` : String(err);
}
