// Attempt identifiers (doc/execution.md): 128 random bits as 32 lowercase hex characters.
//
// Drawn from a pool filled 256 ids at a time: crypto.randomBytes(16) costs about 5 µs a call
// (a crypto job and a fresh buffer each time) against 0.1 µs from the pool, and at 3 500
// attempts a second (bench row retries) one id a call was 15 % of the primary's CPU. The
// bits are the same CSPRNG's (crypto.randomUUID keeps such a pool too); only the primary
// makes ids, and its children are exec'd, never forked with a copy of the pool.
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const POOL_IDS = 256;
const pool = Buffer.allocUnsafeSlow(ID_BYTES * POOL_IDS);
let taken = POOL_IDS;

/** A new attempt's id: 128 random bits, 32 lowercase hex characters. */
export function newAttemptId(): string {
  if (taken === POOL_IDS) {
    randomFillSync(pool);
    taken = 0;
  }
  const at = taken++ * ID_BYTES;
  return pool.toString('hex', at, at + ID_BYTES);
}
