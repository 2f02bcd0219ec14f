// The JetStream API's answers tickd acts on, by their error codes (a publish refused for its
// expected last sequence: lib/lease/errors.ts isWrongLastSequence, which the lease shares).
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';

export function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;
}
