// The cluster secret of the tests (tickd(8) SECURITY): one file every test node and offline
// command of a test run shares, the keys it makes, and a StreamTrust that collects what a
// direct read of a stream quarantined.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { LogRecord } from '../../lib/engine/journal.ts';
import { ClusterKeys } from '../../lib/jetstream/cluster-keys.ts';
import { sealRecord } from '../../lib/jetstream/record-seal.ts';
import { encodeRecord, FRAME_HEADER_BYTES } from '../../lib/logfile/codec.ts';
import type { Quarantined, StreamTrust } from '../../lib/jetstream/quarantine.ts';
import { tempDir } from './tmp.ts';

export const TEST_SECRET = 'tickd-test-cluster-secret-0123456789abcdef0123456789abcdef';

let file: string | null = null;

/** A secret file holding TEST_SECRET (mode 600), made once per test process. */
export function testSecretFile(): string {
  if (file === null) {
    file = join(tempDir(), 'cluster.secret');
    writeFileSync(file, `${TEST_SECRET}\n`);
    chmodSync(file, 0o600);
  }
  return file;
}

export const testKeys = new ClusterKeys([TEST_SECRET]);

/** Trust in the test secret; what it quarantines is kept in `seen`. */
export function testTrust(): StreamTrust & { readonly seen: Quarantined[] } {
  const seen: Quarantined[] = [];
  return { keys: testKeys, seen, quarantined: (q) => { seen.push(q); } };
}

/**
 * Publishes a record to a cluster's stream as its leader would (sealed for the sequence it
 * lands at, expecting the stream's last sequence before it): `rec` or a payload's bytes.
 */
export async function publishSealed(js: JetStreamClient, jsm: JetStreamManager, stream: string, subject: string, rec: LogRecord | Uint8Array): Promise<number> {
  const last = (await jsm.streams.info(stream)).state.last_seq;
  const payload = rec instanceof Uint8Array ? rec : encodeRecord(rec).subarray(FRAME_HEADER_BYTES);
  return (await js.publish(subject, sealRecord(testKeys, stream, subject, last + 1, payload), { expect: { lastSequence: last } })).seq;
}
