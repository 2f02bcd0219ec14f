// Frames in a buffer: the one iteration that replay, compaction and dump build on (through
// replay.ts scanFile), and the fold of records to their last state. A frame whose declared length runs past the end of the data is
// "incomplete" (a torn tail when it is the last one), never an error here; a complete frame
// that does not decode throws RecordDecodeError (NewerRecordError when it is a newer tickd's
// record); a declared length above MAX_PAYLOAD_BYTES is corruption even when incomplete, so
// one damaged header cannot pass for a torn tail.
import { decodePayload, FRAME_HEADER_BYTES, MAX_PAYLOAD_BYTES, RecordDecodeError } from './codec.ts';
import type { LogRecord } from '../engine/journal.ts';

/**
 * Length of the payload of the frame at buf[at], or -1 if the header itself is incomplete.
 * Throws for an implausible length (see MAX_PAYLOAD_BYTES).
 */
function payloadLength(buf: Buffer, at: number, stop: number, baseOffset: number): number {
  if (at + FRAME_HEADER_BYTES > stop) return -1;
  const len = buf.readUInt32BE(at);
  if (len > MAX_PAYLOAD_BYTES) {
    throw new RecordDecodeError(baseOffset + at, baseOffset + at, `frame length ${len} exceeds the ${MAX_PAYLOAD_BYTES}-byte limit`);
  }
  return len;
}

/**
 * Decodes every complete frame of buf[0, stop) in order, calling onRecord with the record
 * and the frame's bounds in `buf`. Returns the index where the first incomplete frame starts
 * (== stop when none is). No per-record Buffer is made: strings are copied out directly.
 */
export function forEachFrame(
  buf: Buffer,
  baseOffset: number,
  onRecord: (rec: LogRecord, frameStart: number, frameEnd: number) => void,
  stop = buf.length,
): number {
  let at = 0;
  for (;;) {
    const len = payloadLength(buf, at, stop, baseOffset);
    if (len < 0 || at + FRAME_HEADER_BYTES + len > stop) return at;
    const frameEnd = at + FRAME_HEADER_BYTES + len;
    onRecord(decodePayload(buf, at + FRAME_HEADER_BYTES, frameEnd, baseOffset), at, frameEnd);
    at = frameEnd;
  }
}

/** The key of a format mark: one for the whole log, apart from every job's and rule's. */
export const FORMAT_KEY = 'f';

/** Fold key: a job and a rule with the same identifier never collide (doc/logfile-format.md). */
export function recordKey(rec: LogRecord): string {
  switch (rec.t) {
    case 'job': return `j${rec.job.id}`;
    case 'job.removed': return `j${rec.id}`;
    case 'rule': return `r${rec.rule.id}`;
    case 'rule.removed': return `r${rec.id}`;
    case 'schedule': return `s${rec.state.schedule.id}`;
    case 'schedule.removed': return `s${rec.id}`;
    case 'format': return FORMAT_KEY;
  }
}

export function isRemoval(rec: LogRecord): boolean {
  return rec.t === 'job.removed' || rec.t === 'rule.removed' || rec.t === 'schedule.removed';
}

/**
 * Folds `rec` into `state` the way compaction does: one value per entry, in order of last
 * write (a re-created entry moves to the end), and a removal drops its entry. A format mark
 * is no entry (it says how the log was written, not what it holds): it is left out, and a
 * compaction puts the highest one it saw at the head of its output itself (fold.ts).
 */
export function foldRecord<V>(state: Map<string, V>, rec: LogRecord, value: () => V): void {
  if (rec.t === 'format') return;
  const key = recordKey(rec);
  state.delete(key);
  if (!isRemoval(rec)) state.set(key, value());
}
