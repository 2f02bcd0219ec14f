// The cluster's stream: created on first use, one per cluster name, holding every record the
// logfile would get under one subject per identifier (subjects.ts). Its retention is the
// compaction: only the last message of each subject is kept (max_msgs_per_subject = 1).
// Replicas: as asked when tickd creates the stream, lowered (with a warning) to what the NATS
// deployment can hold; an existing stream is used as it is.
import { JetStreamApiError, type JetStreamManager, type MsgRequest, type NextMsgRequest, type StoredMsg, type StreamInfo } from '@nats-io/jetstream';
import { isStreamNotFound } from './api-errors.ts';
import type { Logger } from '../log.ts';
import type { ClusterSubjects } from './subjects.ts';

export async function ensureStream(jsm: JetStreamManager, subjects: ClusterSubjects, replicas: number, log: Logger): Promise<StreamInfo> {
  try {
    return await jsm.streams.info(subjects.stream);
  } catch (err) {
    if (!isStreamNotFound(err)) throw err;
  }
  for (let r = replicas; ; r--) {
    try {
      const info = await jsm.streams.add({
        name: subjects.stream,
        subjects: [subjects.all],
        max_msgs_per_subject: 1,
        num_replicas: r,
      });
      if (r < replicas) log.warn({ asked: replicas, replicas: r }, 'cluster-replicas capped at what the NATS deployment can hold');
      log.info({ stream: subjects.stream, replicas: r }, 'stream created');
      return info;
    } catch (err) {
      // A server alone refuses replicas > 1; a cluster refuses more replicas than servers.
      if (r <= 1 || !(err instanceof JetStreamApiError)) throw err;
    }
  }
}

/** The servers holding a stream (its leader and replicas): where a consumer of it can be put. */
export function streamPeers(info: StreamInfo): string[] {
  return [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)].filter((p) => p !== undefined);
}

/**
 * The sequence of the stream's first message at or after `seq`, or null when there is none,
 * asked of its leader: a consumer says "nothing pending" from its own server's copy, which may
 * be behind (a server that came back and is catching up). The server takes next_by_subj in
 * $JS.API.STREAM.MSG.GET (2.9 and later); the client types it for the direct API only.
 */
export async function nextSeqOnLeader(jsm: JetStreamManager, stream: string, seq: number): Promise<number | null> {
  return (await nextOnLeader(jsm, stream, seq))?.seq ?? null;
}

/** The stream's first message at or after `seq`, or null (nextSeqOnLeader's message). */
export function nextOnLeader(jsm: JetStreamManager, stream: string, seq: number): Promise<StoredMsg | null> {
  const query: NextMsgRequest = { seq, next_by_subj: '>' };
  return jsm.streams.getMessage(stream, query as unknown as MsgRequest);
}
