// One TCP connection's protocol state (worker side, no socket code): framing, the AUTH state
// machine (interface.md, Authentication > TCP), namespace scoping, and reply ORDER. Commands
// are answered asynchronously by the primary, but a connection's replies must leave in the
// order its lines arrived, so every line that will be answered reserves a slot in an output
// queue; slots are written out from the head as they fill.
import type { Command, Reply } from '../domain/command.ts';
import { authenticate, OPEN_ACCESS, type Principal, type TokenTable } from '../auth/verify.ts';
import { scopeCommand } from '../auth/scope.ts';
import { LineFramer } from './framer.ts';
import { tokenize } from './tokenize.ts';
import { parseLine } from './parse.ts';
import { formatAuthOk, formatPreAuthError, formatReply, formatTooLong } from './format.ts';

export interface Transport {
  /** Returns false when the peer is not keeping up (the caller pauses reading). */
  write(text: string): boolean;
  close(): void;
}

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

export class Session {
  private readonly opts: SessionOptions;
  private readonly framer = new LineFramer();
  private principal: Principal | null;
  private closed = false;
  private slots: Array<string | undefined> = [];
  private head = 0;
  /** Lines dispatched to the primary and not yet answered. */
  outstanding = 0;

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
    for (const line of this.framer.lines()) {
      if (this.closed) return;
      if (typeof line === 'string') this.onLine(line);
      else this.onTooLong(line.head);
    }
    this.flush();
  }

  /** Marks the connection gone: late replies are dropped. */
  end(): void {
    this.closed = true;
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
        // after a successful AUTH it is an unknown instruction (decisions §7).
        if (this.opts.tokens === null) {
          this.push(formatAuthOk());
          this.report('', 'AUTH', process.hrtime.bigint(), true);
        }
        return;
      case 'error':
        this.push(formatReply(parsed.rid, parsed.reply));
        this.report(parsed.rid, tokens[1] ?? '', process.hrtime.bigint(), false);
        return;
      case 'command':
        return this.run(parsed.rid, tokens[1] === 'RULE' ? 'RULE SET' : tokens[1]!, parsed.cmd);
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
      this.flush();
      if (this.outstanding === 0 && this.answered.length > 0) {
        for (const cb of this.answered.splice(0)) cb();
      }
    });
  }

  private answered: Array<() => void> = [];

  /** Runs `cb` once every line dispatched so far is answered and written (at once if none is). */
  whenAnswered(cb: () => void): void {
    if (this.outstanding === 0) cb();
    else this.answered.push(cb);
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
    while (end < this.slots.length && this.slots[end] !== undefined) {
      parts.push(this.slots[end]!);
      this.slots[end] = EMPTY;
      end++;
    }
    if (parts.length === 0) return;
    this.head = this.base + end;
    if (end > 1024 && end * 2 > this.slots.length) {
      this.slots = this.slots.slice(end);
      this.base += end;
    }
    this.opts.transport.write(parts.length === 1 ? parts[0]! : parts.join(''));
  }
}
