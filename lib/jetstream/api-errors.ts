// The JetStream API's answers tickd acts on, by their error codes (a publish refused for its
// expected last sequence: lib/lease/errors.ts isWrongLastSequence, which the lease shares).
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';

const SEQUENCE_NOT_FOUND = 10043;
const DELETE_FAILED = 10057;

/** The answer to deleting a message that is gone already (replaced by a later write, or deleted). */
export function alreadyGone(err: unknown): boolean {
  if (!(err instanceof JetStreamApiError)) return false;
  return err.code === SEQUENCE_NOT_FOUND || (err.code === DELETE_FAILED && /no message found/i.test(err.message));
}

export function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;
}
