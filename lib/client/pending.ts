// A request as the client carries it from the call to its answer: the text to send (without
// its request id), whether it changes something, and what to do with the reply lines. The
// kinds of request (one answer line, a listing, an item of a bulk load) extend it.
import type { TickdError } from './errors.ts';

export const WAITING = 0;
export const SENT = 1;
export const SETTLED = 2;

export interface CallOptions {
  /** ms; overrides the client's timeout for this call (0: none). */
  readonly timeout?: number;
  readonly signal?: AbortSignal;
}

export abstract class Pending {
  /** Protocol text after the request id: `GET job.1`. */
  readonly text: string;
  /** Persisted by the daemon (tickd-protocol(7)): never re-sent after a lost answer. */
  readonly write: boolean;
  rid = '';
  state: typeof WAITING | typeof SENT | typeof SETTLED = WAITING;
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  unlisten: (() => void) | undefined = undefined;

  constructor(text: string, write: boolean) {
    this.text = text;
    this.write = write;
  }

  /** One reply line, request id removed; true when it is the last of the answer. Called even once settled (a timed-out request's answer still arrives and is read past). */
  abstract line(rest: string): boolean;
  /** The call fails with `err` (called at most once, and never after its answer). */
  abstract fail(err: TickdError): void;
  /** Whether it may be sent again on a new connection: a read that has handed nothing out. */
  resendable(): boolean {
    return !this.write;
  }
  /** Its timer restarts with every line (a listing's timeout is the wait for its next line). */
  get idleTimer(): boolean {
    return false;
  }
  /** The command's name for messages: `SET`, `SCHEDULE PAUSE`. */
  get verb(): string {
    const sp = this.text.indexOf(' ');
    const first = sp === -1 ? this.text : this.text.slice(0, sp);
    if (first !== 'RULE' && first !== 'SCHEDULE') return first;
    const rest = this.text.slice(sp + 1);
    const sp2 = rest.indexOf(' ');
    return `${first} ${sp2 === -1 ? rest : rest.slice(0, sp2)}`;
  }
}
