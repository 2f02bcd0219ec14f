// The cluster the fuzzer attacks (test/integration/cluster-fuzz.test.ts): its name, nodes and
// subjects, and the keys of the strangers it seals with: another cluster's secret, and a second
// cluster that shares this one's secret but seals for its own name.
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { checkpointNames } from '../../../lib/jetstream/checkpoint.ts';
import { ClusterKeys } from '../../../lib/jetstream/cluster-keys.ts';
import { clusterSubjects, decodeToken } from '../../../lib/jetstream/subjects.ts';
import { encodeRecord, FRAME_HEADER_BYTES } from '../../../lib/logfile/codec.ts';

export const NAME = 'fz';
export const NODES = ['fz-a', 'fz-b', 'fz-c'] as const;
export const subjects = clusterSubjects(NAME);
export const cp = checkpointNames(NAME);
/** Far in the future: these jobs never fire. */
export const FAR = 4_000_000_000_000_000_000n;

/** Another cluster's secret: what it seals does not verify here. */
export const otherKeys = new ClusterKeys(['x'.repeat(40)]);
/** A second cluster that shares this one's secret seals for its own name: no record, batch or report of this one. */
export const OTHER_CLUSTER = 'fzother';

/** A record's payload as the stream holds it (a logfile frame without its header), unsealed. */
export const bare = (rec: LogRecord): Buffer => encodeRecord(rec).subarray(FRAME_HEADER_BYTES);

/** The job identifier of a stream subject of jobs, or null. */
export function idOf(subject: string): string | null {
  const prefix = `${NAME}.j.`;
  if (!subject.startsWith(prefix) || subject.slice(prefix.length).includes('.')) return null;
  return decodeToken(subject.slice(prefix.length));
}
