// The server side of the NATS client protocol, parsed straight from the socket's bytes, for the
// replay's bare connection (wire/connection.ts). Why not the client library: at a million small
// messages its parser and message objects (subject and reply strings, a Buffer per payload,
// header objects) cost 1.7-1.9 s of the daemon's CPU; this costs a few hundred ms. A MSG or
// HMSG is handed on as offsets into the chunk it arrived in (one reused WireFrame, valid only
// during the call): nothing is allocated per message unless the reader asks for a string.
//
// Frames from the server (https://docs.nats.io/reference/reference-protocols/nats-protocol):
//   MSG <subject> <sid> [reply-to] <#bytes>\r\n<payload>\r\n
//   HMSG <subject> <sid> [reply-to] <#header bytes> <#total bytes>\r\n<headers><payload>\r\n
//   INFO {...}\r\n  PING\r\n  PONG\r\n  +OK\r\n  -ERR '...'\r\n   (handed on as lines)
// The bytes arrive in one buffer of the parser's own, which the socket reads into directly
// (`onread`: no Buffer per chunk, whose external memory made V8 run 7-8 full collections of the
// growing stores per replay instead of 1). A frame split across reads stays at the buffer's
// start until the rest is read in after it; a frame larger than the buffer grows it once (the
// frame's size is known from its control line). A frame that does not follow the grammar
// throws WireProtocolError: the connection cannot be trusted after it.

const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;
const MAX_TOKENS = 6;
/** A control line longer than this without its end is not NATS (INFO with many URLs fits). */
const MAX_CONTROL_LINE = 1 << 20;
const EMPTY = Buffer.alloc(0);
const INITIAL_BYTES = 256 << 10;
const MIN_READ_BYTES = 64 << 10;
/**
 * NATS caps max_payload (headers included) at 64 MiB: a frame said to be larger is a broken
 * or hostile peer, refused before the buffer grows to hold it.
 */
const MAX_FRAME_BYTES = 64 << 20;

export class WireProtocolError extends Error {
  override readonly name = 'WireProtocolError';
}

/** One MSG or HMSG: offsets into `buf`. Without headers, headerStart === payloadStart. */
export class WireFrame {
  buf: Buffer = EMPTY;
  subjectStart = 0;
  subjectEnd = 0;
  sid = 0;
  /** -1 when the message has no reply subject. */
  replyStart = -1;
  replyEnd = -1;
  headerStart = 0;
  payloadStart = 0;
  end = 0;

  get subject(): string {
    return this.buf.toString('latin1', this.subjectStart, this.subjectEnd);
  }

  get reply(): string {
    return this.replyStart < 0 ? '' : this.buf.toString('latin1', this.replyStart, this.replyEnd);
  }

  /** The header block as text (`NATS/1.0[ code description]\r\nName: value\r\n...`), '' if none. */
  get headers(): string {
    return this.buf.toString('latin1', this.headerStart, this.payloadStart);
  }

  get payloadLength(): number {
    return this.end - this.payloadStart;
  }

  /** The status code of a header block's first line (`NATS/1.0 408 ...`), 0 when it has none. */
  get status(): number {
    const b = this.buf;
    const at = this.headerStart + 9; // after "NATS/1.0 "
    if (this.payloadStart - this.headerStart < 12 || b[at - 1] !== SPACE) return 0;
    const code = (b[at]! - 48) * 100 + (b[at + 1]! - 48) * 10 + (b[at + 2]! - 48);
    return Number.isInteger(code) && code >= 100 && code <= 999 ? code : 0;
  }
}

export interface WireEvents {
  message(frame: WireFrame): void;
  /** Any other line (INFO, PING, PONG, +OK, -ERR), without its CRLF. */
  control(line: string): void;
}

/** The decimal number buf[from, to), or -1 when it is not one. */
function decimal(buf: Buffer, from: number, to: number): number {
  if (to <= from || to - from > 15) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

export class WireParser {
  private readonly on: WireEvents;
  private readonly frame = new WireFrame();
  /** Token bounds of the control line being parsed: start, end, start, end, ... */
  private readonly tokens = new Int32Array(2 * MAX_TOKENS);
  /** buf[0, have): bytes received and not parsed yet (the start of an incomplete frame). */
  private buf = Buffer.allocUnsafe(INITIAL_BYTES);
  private have = 0;
  /** Bytes buf must hold before a parse can complete the frame at its start. */
  private need = 0;

  constructor(on: WireEvents) {
    this.on = on;
  }

  /**
   * Where the next bytes received go: right after those kept, at least MIN_READ_BYTES (and
   * the whole of a frame known to be larger). A socket's `onread` reads into it directly.
   */
  space(): Buffer {
    const want = Math.max(this.have + MIN_READ_BYTES, this.need);
    if (want > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(want, 2 * this.buf.length));
      this.buf.copy(bigger, 0, 0, this.have);
      this.buf = bigger;
    }
    return this.buf.subarray(this.have);
  }

  /** `n` bytes were written at the start of space(): parses the frames they complete. */
  filled(n: number): void {
    this.have += n;
    if (this.have < this.need) return;
    const at = this.parse(this.buf.subarray(0, this.have));
    if (at > 0) {
      this.buf.copy(this.buf, 0, at, this.have);
      this.have -= at;
    }
  }

  /** Parses what `chunk` completes (copied: the caller may reuse it). */
  feed(chunk: Buffer): void {
    for (let at = 0; at < chunk.length;) {
      const n = chunk.copy(this.space(), 0, at);
      at += n;
      this.filled(n);
    }
  }

  /** Parses the whole frames of `buf`; returns where the first incomplete one starts. */
  private parse(buf: Buffer): number {
    const n = buf.length;
    let at = 0;
    this.need = 0;
    while (at < n) {
      const lf = buf.indexOf(LF, at);
      if (lf < 0) {
        if (n - at > MAX_CONTROL_LINE) throw new WireProtocolError(`a control line of more than ${MAX_CONTROL_LINE} bytes`);
        this.need = n - at + 1;
        return at;
      }
      const lineEnd = lf > at && buf[lf - 1] === CR ? lf - 1 : lf;
      const op = buf[at];
      if (op === 77 /* M */ || op === 72 /* H */) {
        const end = this.message(buf, at, lineEnd, lf + 1, op === 72);
        if (end + 2 > n) {
          this.need = end + 2 - at;
          return at;
        }
        if (buf[end] !== CR || buf[end + 1] !== LF) throw new WireProtocolError('a message not followed by CRLF');
        this.on.message(this.frame);
        at = end + 2;
      } else {
        this.on.control(buf.toString('latin1', at, lineEnd));
        at = lf + 1;
      }
    }
    return at;
  }

  /**
   * Fills the frame from the control line buf[at, lineEnd) of a MSG (or an HMSG) whose
   * payload starts at `body`; returns where its payload ends (which may be past the buffer).
   */
  private message(buf: Buffer, at: number, lineEnd: number, body: number, withHeaders: boolean): number {
    const t = this.tokens;
    let count = 0;
    for (let i = at; i < lineEnd;) {
      const c = buf[i];
      if (c === SPACE || c === TAB) { i++; continue; }
      if (count === MAX_TOKENS) { count++; break; }
      t[2 * count] = i;
      while (i < lineEnd && buf[i] !== SPACE && buf[i] !== TAB) i++;
      t[2 * count + 1] = i;
      count++;
    }
    const sizes = withHeaders ? 2 : 1;
    const hasReply = count === 4 + sizes;
    // "MSG" or "HMSG": the first byte was looked at already.
    const o = at + (withHeaders ? 1 : 0);
    if ((count !== 3 + sizes && !hasReply) || t[1] !== o + 3 || buf[o] !== 77 || buf[o + 1] !== 83 || buf[o + 2] !== 71) {
      throw new WireProtocolError(`not a ${withHeaders ? 'HMSG' : 'MSG'} line: ${buf.toString('latin1', at, Math.min(lineEnd, at + 200))}`);
    }
    const f = this.frame;
    f.buf = buf;
    f.subjectStart = t[2]!;
    f.subjectEnd = t[3]!;
    f.sid = decimal(buf, t[4]!, t[5]!);
    f.replyStart = hasReply ? t[6]! : -1;
    f.replyEnd = hasReply ? t[7]! : -1;
    const last = 2 * (count - 1);
    const total = decimal(buf, t[last]!, t[last + 1]!);
    const headerBytes = withHeaders ? decimal(buf, t[last - 2]!, t[last - 1]!) : 0;
    if (f.sid < 0 || total < 0 || total > MAX_FRAME_BYTES || headerBytes < 0 || headerBytes > total) {
      throw new WireProtocolError(`bad numbers in ${buf.toString('latin1', at, Math.min(lineEnd, at + 200))}`);
    }
    f.headerStart = body;
    f.payloadStart = body + headerBytes;
    f.end = body + total;
    return f.end;
  }
}
