// The two shapes of answer a call waits for: one line (`OK`, `OK <body>`, `ERROR <code> ...`),
// and a listing (entries, then `OK`), handed out as an async iterator that reads as it is
// consumed: when its consumer falls a page behind (the daemon's page, 2048 entries), the
// client stops reading the connection, so the daemon stops producing (tickd-protocol(7):
// a client that does not read holds one page of the server's memory).
import { Fifo } from '../domain/fifo.ts';
import type { Core } from './core.ts';
import { ConnectionError, ProtocolError, ReplyError, type TickdError } from './errors.ts';
import { Pending, SETTLED, type CallOptions } from './pending.ts';
import { parseAnswer, type Answer } from './replies.ts';

const PAGE = 2048;

function notProtocol(verb: string, rest: string): ProtocolError {
  return new ProtocolError(`unexpected answer to ${verb}: ${JSON.stringify(rest.slice(0, 80))}`);
}

/** One request, one answer line, read by `read` (which may throw a TickdError). */
export class Single<T> extends Pending {
  readonly #read: (a: Answer, text: string) => T;
  readonly #resolve: (v: T) => void;
  readonly #reject: (e: TickdError) => void;

  constructor(text: string, write: boolean, read: (a: Answer, text: string) => T, resolve: (v: T) => void, reject: (e: TickdError) => void) {
    super(text, write);
    this.#read = read;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  line(rest: string): boolean {
    if (this.state === SETTLED) return true;
    const a = parseAnswer(rest);
    if (a === null) this.#reject(notProtocol(this.verb, rest));
    else {
      try {
        this.#resolve(this.#read(a, this.text));
      } catch (err) {
        this.#reject(err as TickdError);
      }
    }
    return true;
  }

  fail(err: TickdError): void {
    this.#reject(err);
  }
}

/** The body of an `OK`, or the daemon's error as a ReplyError. */
export function okBody(a: Answer, text: string): string {
  if (!a.ok) throw new ReplyError(a.code, a.message, text);
  return a.body;
}

const WRITES = /^(?:SET|REMOVE|RETRY|REMOVERULE|RULE SET|SCHEDULE (?:SET|REMOVE|PAUSE|RESUME|RUN)) /;

/** Whether a request (without its id) changes something: tickd-protocol(7) COMMANDS lists the persisted ones. */
export function isWrite(text: string): boolean {
  return WRITES.test(text);
}

export function call<T>(core: Core, text: string, write: boolean, read: (a: Answer, text: string) => T, opts?: CallOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => core.enqueue(new Single(text, write, read, resolve, reject), opts));
}

/** A listing's entries as they arrive; sent on the first next(). */
export class Listing<T> extends Pending implements AsyncIterableIterator<T> {
  readonly #core: Core;
  readonly #entry: (rest: string) => T | null;
  readonly #opts: CallOptions | undefined;
  readonly #items = new Fifo<T>();
  #received = 0;
  #done = false;
  #started = false;
  #error: TickdError | null = null;
  #waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: TickdError) => void } | null = null;

  constructor(core: Core, text: string, entry: (rest: string) => T | null, opts?: CallOptions) {
    super(text, false);
    this.#core = core;
    this.#entry = entry;
    this.#opts = opts;
  }

  override get idleTimer(): boolean {
    return true;
  }

  /** Sent again after a reconnect only while it has received nothing: entries would repeat. */
  override resendable(): boolean {
    return this.#received === 0;
  }

  line(rest: string): boolean {
    if (rest === 'OK') {
      this.#done = true;
      this.#wake();
      return true;
    }
    const item = this.#entry(rest);
    if (item !== null) {
      if (this.state === SETTLED) return false;
      this.#received++;
      this.#items.push(item);
      if (this.#items.length >= PAGE) this.#core.pauseFor(this);
      this.#wake();
      return false;
    }
    if (this.state !== SETTLED) {
      const a = parseAnswer(rest);
      this.#error = a !== null && !a.ok ? new ReplyError(a.code, a.message, this.text) : notProtocol(this.verb, rest);
      this.#wake();
    }
    return true;
  }

  fail(err: TickdError): void {
    this.#error = this.#received === 0 || err.code !== 'connection' ? err
      : new ConnectionError(`${this.verb} interrupted after ${this.#received} entries: ${err.message} (not re-sent: entries would repeat)`, { cause: err });
    this.#wake();
  }

  #wake(): void {
    const w = this.#waiter;
    if (w === null) return;
    const item = this.#items.shift();
    if (item === undefined && !this.#done && this.#error === null) return;
    this.#waiter = null;
    if (item !== undefined) w.resolve({ value: item, done: false });
    else if (this.#error !== null) w.reject(this.#error);
    else w.resolve({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (!this.#started) {
      this.#started = true;
      this.#core.enqueue(this, this.#opts);
    }
    const item = this.#items.shift();
    if (item !== undefined) {
      if (this.#items.length <= PAGE / 2) this.#core.resumeFor(this);
      return Promise.resolve({ value: item, done: false });
    }
    if (this.#error !== null) return Promise.reject(this.#error);
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    this.#core.resumeFor(this);
    return new Promise((resolve, reject) => { this.#waiter = { resolve, reject }; });
  }

  /** The consumer stopped early (break): the rest of the answer is read past. */
  return(): Promise<IteratorResult<T>> {
    this.#items.clear();
    if (this.#started && !this.#done && this.#error === null) {
      this.#error = new ConnectionError('listing abandoned');
      this.#core.cancel(this, this.#error);
    }
    this.#done = true;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Every entry, in an array (for listings known to be small). */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
