// Splits a TCP byte stream into protocol lines (tickd-protocol(7) GRAMMAR).
//
// Theory:
// - A line ends with LF; one CR right before the LF is removed. The limit is MAX_LINE_BYTES of
//   content (the terminator, LF or CRLF, does not count).
// - Common path: a chunk holding many complete lines (10 000 pipelined commands in one 300 KB
//   read) is scanned with indexOf and each line decoded straight out of the chunk: no copy of
//   the chunk, no concatenation, linear in its size.
// - Only the incomplete tail of a chunk is copied, into a carry buffer that grows by doubling up
//   to MAX_LINE_BYTES + 1 (room for a trailing CR). It never holds more, so memory per
//   connection stays bounded whatever the peer sends.
// - An over-long line yields exactly ONE TooLongLine carrying the decoded start of the line
//   (up to MAX_LINE_BYTES bytes, enough to read the request id), as soon as it is known to be
//   too long; the rest of it is dropped without buffering until its LF, across any number of
//   chunks. The next line is framed normally.
// - Decoding is UTF-8 with replacement characters: invalid bytes never throw.

export const MAX_LINE_BYTES = 4096;

const LF = 0x0a;
const CR = 0x0d;

export interface TooLongLine {
  readonly tooLong: true;
  /** The beginning of the line (at most MAX_LINE_BYTES bytes, decoded). */
  readonly head: string;
}

export type FramedLine = string | TooLongLine;

export class LineFramer {
  private carry: Buffer | null = null;
  private carryLen = 0;
  private discarding = false;
  private out: FramedLine[] = [];
  private outHead = 0;

  /** Bytes held for an incomplete line (never more than MAX_LINE_BYTES + 1). */
  get bufferedBytes(): number {
    return this.carryLen;
  }

  /** Frames a chunk; the complete lines it finishes become available from lines(). */
  push(chunk: Buffer): void {
    let pos = 0;
    const end = chunk.length;
    while (pos < end) {
      const lf = chunk.indexOf(LF, pos);
      if (this.discarding) {
        if (lf === -1) return;
        this.discarding = false;
        pos = lf + 1;
        continue;
      }
      if (lf === -1) {
        this.hold(chunk, pos, end);
        return;
      }
      if (this.carryLen === 0) this.emitFromChunk(chunk, pos, lf);
      else this.emitWithCarry(chunk, pos, lf);
      pos = lf + 1;
    }
  }

  /** Framed lines not yet consumed (at most one chunk's worth: the caller reads no more meanwhile). */
  get queued(): number {
    return this.out.length - this.outHead;
  }

  /** The next framed line not yet consumed, or undefined when there is none. */
  shift(): FramedLine | undefined {
    if (this.outHead >= this.out.length) return undefined;
    const line = this.out[this.outHead++]!;
    if (this.outHead >= this.out.length) {
      this.out = [];
      this.outHead = 0;
    }
    return line;
  }

  /** The framed lines not yet consumed, in order. Stopping early keeps the rest for later. */
  *lines(): Generator<FramedLine, void, undefined> {
    for (let line = this.shift(); line !== undefined; line = this.shift()) yield line;
  }

  private emitFromChunk(chunk: Buffer, start: number, lf: number): void {
    const stop = lf > start && chunk[lf - 1] === CR ? lf - 1 : lf;
    if (stop - start > MAX_LINE_BYTES) this.emitTooLong(chunk, start, start + MAX_LINE_BYTES);
    else this.out.push(chunk.toString('utf8', start, stop));
  }

  private emitWithCarry(chunk: Buffer, start: number, lf: number): void {
    const total = this.carryLen + (lf - start);
    // total can exceed the carry bound by the bytes before this LF; the check below catches it.
    if (total > MAX_LINE_BYTES + 1) {
      this.tooLongWithCarry(chunk, start, lf);
      return;
    }
    this.append(chunk, start, lf);
    const line = this.carry!;
    const stop = this.carryLen > 0 && line[this.carryLen - 1] === CR ? this.carryLen - 1 : this.carryLen;
    if (stop > MAX_LINE_BYTES) this.emitTooLong(line, 0, MAX_LINE_BYTES);
    else this.out.push(line.toString('utf8', 0, stop));
    this.resetCarry();
  }

  /** The incomplete tail of a chunk: keep it, or give up on the line once it is too long. */
  private hold(chunk: Buffer, start: number, end: number): void {
    if (this.carryLen + (end - start) > MAX_LINE_BYTES + 1) {
      this.tooLongWithCarry(chunk, start, end);
      this.discarding = true;
      return;
    }
    this.append(chunk, start, end);
  }

  private tooLongWithCarry(chunk: Buffer, start: number, end: number): void {
    const fromChunk = Math.min(end - start, Math.max(0, MAX_LINE_BYTES - this.carryLen));
    this.append(chunk, start, start + fromChunk);
    this.emitTooLong(this.carry!, 0, Math.min(this.carryLen, MAX_LINE_BYTES));
    this.resetCarry();
  }

  private emitTooLong(buf: Buffer, start: number, end: number): void {
    this.out.push({ tooLong: true, head: buf.toString('utf8', start, end) });
  }

  private append(chunk: Buffer, start: number, end: number): void {
    const need = this.carryLen + (end - start);
    if (this.carry === null || this.carry.length < need) {
      const grown = Buffer.allocUnsafe(Math.min(MAX_LINE_BYTES + 1, Math.max(need, 2 * (this.carry?.length ?? 64))));
      if (this.carry !== null) this.carry.copy(grown, 0, 0, this.carryLen);
      this.carry = grown;
    }
    chunk.copy(this.carry, this.carryLen, start, end);
    this.carryLen = need;
  }

  private resetCarry(): void {
    this.carryLen = 0;
    // Drop a grown buffer so an idle connection keeps only a small one.
    if (this.carry !== null && this.carry.length > 256) this.carry = null;
  }
}
