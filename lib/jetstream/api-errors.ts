// The JetStream API's answers tickd acts on, by their error codes.
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';

/** Refused for its expected last sequence (of the stream, or of the subject). */
const WRONG_LAST_SEQUENCE = [10071, 10164];

export function isStreamNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;
}

export function isWrongLastSequence(err: unknown): boolean {
  return err instanceof JetStreamApiError && WRONG_LAST_SEQUENCE.includes(err.code);
}
