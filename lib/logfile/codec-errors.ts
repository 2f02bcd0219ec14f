// What the record codec (codec.ts, which re-exports these) throws: a record it refuses to
// encode, a record that does not decode, and among those, a record of a newer tickd.
import { newerFormatText } from '../domain/format.ts';

export type RecordEncodeCode = 'string_too_long' | 'list_too_long' | 'record_too_large' | 'execution_out_of_range' | 'format_out_of_range';

export class RecordEncodeError extends Error {
  override readonly name = 'RecordEncodeError';
  readonly code: RecordEncodeCode;
  constructor(code: RecordEncodeCode, message: string) {
    super(message);
    this.code = code;
  }
}

export class RecordDecodeError extends Error {
  override readonly name: string = 'RecordDecodeError';
  /** Absolute file offset of the frame that does not decode. */
  readonly frameOffset: number;
  /** Absolute file offset of the offending byte. */
  readonly offset: number;
  readonly reason: string;
  constructor(frameOffset: number, offset: number, reason: string, message?: string) {
    super(message ?? `record at byte offset ${frameOffset} does not decode: ${reason} (byte offset ${offset})`);
    this.frameOffset = frameOffset;
    this.offset = offset;
    this.reason = reason;
  }
}

/**
 * An extension record that needs a newer format than FORMAT_VERSION (lib/domain/format.ts):
 * the file is sound, this tickd is too old to read it. A RecordDecodeError all the same, so
 * that a reader that does not tell the two apart still refuses the record, never skips it,
 * and never cuts it off as a torn tail; the readers that speak to a person (startup, dump,
 * import: replay.ts LogfileTooNewError) say which it is.
 */
export class NewerRecordError extends RecordDecodeError {
  override readonly name: string = 'NewerRecordError';
  /** The lowest format that reads the record (> FORMAT_VERSION). */
  readonly needs: number;
  /** `offset`: the absolute file offset of the record's `needs` field. */
  constructor(frameOffset: number, offset: number, needs: number) {
    super(frameOffset, offset, `the record needs tickd format ${needs}`, newerFormatText(needs, `at byte offset ${frameOffset}`));
    this.needs = needs;
  }
}
