// One TCP connection's protocol state (worker side, no socket code): framing, the AUTH state
// machine (tickd-protocol(7) AUTHENTICATION), namespace scoping, reply ORDER and flow control.
//
// Theory:
// - Order: commands are answered asynchronously by the primary, but a connection's replies must
//   leave in the order its lines arrived, so every line that will be answered reserves a slot
//   in an output queue; slots are written out from the head as they fill.
// - Bounded memory whatever the client does: lines are taken from the framer one at a time and
//   only while the connection is not saturated: fewer than MAX_OUTSTANDING commands unanswered,
//   fewer than MAX_BACKLOG_BYTES written and not yet taken by the socket, and no listing
//   streaming. Otherwise reading stops (transport.pause) and the unread lines stay in the
//   framer (one read chunk at most) until replies come back or the socket drains.
// - Listings (QUERY, LISTRULES, SCHEDULE LIST) stream page by page (lib/protocol/listing.ts); the next page is
//   asked for only when the listing is at the head of the output and the backlog is below
//   PAGE_LOW_WATER. Lines after a listing wait until it ends, so one connection holds at most
//   one page. The client sees the same lines and terminal OK as an unpaged answer.
import type { Command, Reply } from '../domain/command.ts';
import { authenticate, OPEN_ACCESS, type Principal, type TokenTable } from '../auth/verify.ts';
import { scopeCommand } from '../auth/scope.ts';
import { LineFramer } from './framer.ts';
import { Listing } from './listing.ts';
import { tokenize } from './tokenize.ts';
import { parseLine } from './parse.ts';
import { formatAuthOk, formatPreAuthError, formatReply, formatTooLong } from './format.ts';

export interface Transport {
  write(text: string): void;
  /** Bytes written and not yet taken by the socket. */
  backlog(): number;
  /** Stop / start reading from the peer. Called often: both must be cheap when nothing changes. */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Commands of one connection dispatched and not yet answered, at most. */
export const MAX_OUTSTANDING = 4096;
/** Unwritten reply bytes over which a connection takes no more lines. */
export const MAX_BACKLOG_BYTES = 1024 * 1024;
/** A streaming listing asks for its next page only below this backlog. */
export const PAGE_LOW_WATER = 256 * 1024;

export interface RequestInfo {
  /** '' for AUTH, which carries no request id. */
  readonly rid: string;
  readonly instruction: string;
  readonly startedNs: bigint;
  readonly success: boolean;
}

export interface SessionOptions {
  readonly dispatch: (cmd: Command, cb: (reply: Reply) => void) => void;
  /** null: authentication disabled. */
  readonly tokens: TokenTable | null;
  readonly transport: Transport;
  /** Called once per answered request (telemetry spans). */
  readonly onRequest?: (info: RequestInfo) => void;
}

const EMPTY = '';

type Slot = string | undefined | Listing;

/** The instruction as telemetry names it: `RULE SET`, `SCHEDULE LIST`, else its one word. */
function instructionName(tokens: readonly string[]): string {
  const word = tokens[1] ?? '';
  return (word === 'RULE' || word === 'SCHEDULE') && tokens[2] !== undefined ? `${word} ${tokens[2]}` : word;
}

export class Session {
  private readonly opts: SessionOptions;
  private readonly framer = new LineFramer();
  private principal: Principal | null;
  private closed = false;
  /** No more input will be read (half-close, drain); framed lines are still answered. */
  private inputEnded = false;
  private slots: Slot[] = [];
  private head = 0;
  /** Requests dispatched to the primary and not yet answered (a listing's page counts). */
  private outstanding = 0;
  /** The listing still streaming, if any: no line after it is taken until it ends. */
  private listing: Listing | null = null;
  private pumping = false;

  constructor(opts: SessionOptions) {
    this.opts = opts;
    this.principal = opts.tokens === null ? OPEN_ACCESS : null;
  }

  get authenticated(): boolean {
    return this.principal !== null;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  feed(chunk: Buffer): void {
    // Once closed (pre-auth error), nothing is framed: the peer may keep sending until its
    // socket goes, and framed-but-unread lines would otherwise pile up in the framer.
    if (this.closed) return;
    this.framer.push(chunk);
    this.pump();
  }

  /** The socket took the backlog (its 'drain'): continue a listing, take more lines. */
  writable(): void {
    this.pump();
  }

  /** No more input: lines already framed are still answered, nothing more is read. */
  endInput(): void {
    this.inputEnded = true;
    this.pump();
  }

  /** Marks the connection gone: late replies are dropped. */
  end(): void {
    this.closed = true;
  }

  private saturated(): boolean {
    return this.outstanding >= MAX_OUTSTANDING || this.listing !== null || this.opts.transport.backlog() >= MAX_BACKLOG_BYTES;
  }

  /** Takes lines while the connection is not saturated, writes what is ready, sets reading. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.closed && !this.saturated()) {
        const line = this.framer.shift();
        if (line === undefined) break;
        if (typeof line === 'string') this.onLine(line);
        else this.onTooLong(line.head);
      }
      this.flush();
    } finally {
      this.pumping = false;
    }
    if (!this.closed) {
      if (this.inputEnded || this.framer.queued > 0 || this.saturated()) this.opts.transport.pause();
      else this.opts.transport.resume();
    }
    this.settle();
  }

  private onTooLong(head: string): void {
    if (this.principal === null) return this.preAuthError('auth_required');
    const rid = head.split(' ', 1)[0] ?? '';
    if (rid !== '' && !rid.includes('"')) this.push(formatTooLong(rid));
  }

  private onLine(line: string): void {
    const tokens = tokenize(line);
    if (tokens === null || tokens.length === 0) return; // malformed: skipped silently
    const parsed = parseLine(tokens);
    if (this.principal === null) return this.beforeAuth(parsed, tokens.length);
    switch (parsed.kind) {
      case 'ignore':
        return;
      case 'auth':
        // Without an auth_file, AUTH is accepted as a no-op so clients that always send it work;
        // after a successful AUTH it is an unknown instruction
        // (tickd-protocol(7) AUTHENTICATION).
        if (this.opts.tokens === null) {
          this.push(formatAuthOk());
          this.report('', 'AUTH', process.hrtime.bigint(), true);
        }
        return;
      case 'error':
        this.push(formatReply(parsed.rid, parsed.reply));
        this.report(parsed.rid, instructionName(tokens), process.hrtime.bigint(), false);
        return;
      case 'command':
        return this.run(parsed.rid, instructionName(tokens), parsed.cmd);
    }
  }

  private beforeAuth(parsed: ReturnType<typeof parseLine>, ntokens: number): void {
    if (parsed.kind !== 'auth') {
      if (ntokens >= 2) this.preAuthError('auth_required');
      return;
    }
    const started = process.hrtime.bigint();
    const principal = parsed.secret === null ? null : authenticate(this.opts.tokens!, parsed.secret);
    if (principal === null) {
      this.preAuthError(parsed.secret === null ? 'auth_required' : 'auth_failed');
      return this.report('', 'AUTH', started, false);
    }
    this.principal = principal;
    this.push(formatAuthOk());
    this.report('', 'AUTH', started, true);
  }

  private preAuthError(code: 'auth_required' | 'auth_failed'): void {
    this.push(formatPreAuthError(code));
    this.flush();
    this.closed = true;
    this.opts.transport.close();
  }

  private run(rid: string, instruction: string, cmd: Command): void {
    const started = process.hrtime.bigint();
    const scoped = scopeCommand(cmd, this.principal!.namespace);
    if ('ok' in scoped) {
      this.push(formatReply(rid, scoped));
      this.report(rid, instruction, started, false);
      return;
    }
    if (scoped.op === 'job.list' || scoped.op === 'rule.list' || scoped.op === 'schedule.list') {
      const listing = new Listing(rid, instruction, started, scoped);
      this.slots.push(listing);
      this.listing = listing;
      this.requestPage(listing);
      return;
    }
    const slot = this.reserve();
    this.outstanding++;
    this.opts.dispatch(scoped, (reply) => {
      this.outstanding--;
      if (!this.closed) {
        this.slots[slot - this.base] = formatReply(rid, reply);
        this.report(rid, instruction, started, reply.ok);
      }
      this.queueFlush();
    });
  }

  private requestPage(listing: Listing): void {
    this.outstanding++;
    this.opts.dispatch(listing.nextRequest(), (reply) => {
      this.outstanding--;
      if (!this.closed) {
        listing.accept(reply);
        if (listing.done) this.report(listing.rid, listing.instruction, listing.startedNs, listing.success);
      }
      if (listing.done || this.closed) this.listing = null;
      this.queueFlush();
    });
  }

  private flushQueued = false;

  /**
   * Replies come back from the primary in batches, one callback each, in one synchronous run:
   * writing at each callback made one socket write (one syscall) per reply, the worker's main
   * cost under pipelining. They are written once that run is over, in one write per
   * connection; whenAnswered callbacks run after that write.
   */
  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.pump();
    });
  }

  private answered: Array<() => void> = [];

  /** Runs `cb` once every line framed so far is answered and written (at once if it is). */
  whenAnswered(cb: () => void): void {
    this.answered.push(cb);
    this.settle();
  }

  private settle(): void {
    if (this.answered.length === 0 || this.outstanding > 0 || this.listing !== null) return;
    if (!this.closed && this.framer.queued > 0) return;
    for (const cb of this.answered.splice(0)) cb();
  }

  private report(rid: string, instruction: string, startedNs: bigint, success: boolean): void {
    this.opts.onRequest?.({ rid, instruction, startedNs, success });
  }

  // Slots are numbered absolutely; `base` is the absolute number of slots[0], so the array can
  // be compacted without renumbering reservations still in flight.
  private base = 0;

  private reserve(): number {
    this.slots.push(undefined);
    return this.base + this.slots.length - 1;
  }

  private push(text: string): void {
    const slot = this.reserve();
    this.slots[slot - this.base] = text;
  }

  private flush(): void {
    if (this.closed) return;
    let end = this.head - this.base;
    const parts: string[] = [];
    let streaming: Listing | null = null;
    while (end < this.slots.length) {
      const slot = this.slots[end];
      if (slot === undefined) break;
      if (typeof slot === 'string') {
        parts.push(slot);
      } else {
        if (slot.text !== '') parts.push(slot.take());
        if (!slot.done) {
          streaming = slot;
          break;
        }
      }
      this.slots[end] = EMPTY;
      end++;
    }
    this.head = this.base + end;
    if (end > 1024 && end * 2 > this.slots.length) {
      this.slots = this.slots.slice(end);
      this.base += end;
    }
    if (parts.length > 0) this.opts.transport.write(parts.length === 1 ? parts[0]! : parts.join(''));
    if (streaming !== null && !streaming.inFlight && this.opts.transport.backlog() < PAGE_LOW_WATER) this.requestPage(streaming);
  }
}
