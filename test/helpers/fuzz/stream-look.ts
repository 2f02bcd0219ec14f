// What the stream holds on the subjects of jobs the cluster fuzz test found lost
// (test/integration/cluster-fuzz.test.ts): the last message of each, whether its seal verifies,
// the record it holds and who wrote it (a node's message id starts with its tenure's lease
// holder; a restore's is <holder>:restore:<seq>), so that a failure names the writer.
import type { JetStreamManager } from '@nats-io/jetstream';
import { openRecord } from '../../../lib/jetstream/record-seal.ts';
import { decodePayload } from '../../../lib/logfile/codec.ts';
import { testKeys } from '../cluster-secret.ts';
import { NAME, subjects } from './target.ts';

export async function streamOnSubjects(jsm: JetStreamManager, ids: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of ids) {
    const m = await jsm.streams.getMessage(NAME, { last_by_subj: subjects.job(id) }).catch(() => null);
    if (m === null) {
      out.push(`${id}: no message on its subject`);
      continue;
    }
    const buf = Buffer.from(m.data);
    const at = openRecord(testKeys, NAME, m.subject, m.seq, buf, 0, buf.length);
    let what: string;
    if (typeof at === 'string') what = `foreign (${at})`;
    else {
      try {
        const rec = decodePayload(buf, at);
        what = rec.t === 'job' ? `job ${rec.job.execution} ${rec.job.status}` : rec.t;
      } catch (err) {
        what = `sealed, does not decode: ${(err as Error).message}`;
      }
    }
    out.push(`${id}: seq ${m.seq} at ${m.time.toISOString()}: ${what}, message id ${m.header?.get('Nats-Msg-Id') || '(none)'}`);
  }
  return out;
}
