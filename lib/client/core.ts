// The client's engine: one connection at a time, requests pipelined on it, and what happens
// when it is lost (doc/client.md "Reconnection and errors").
//
// Theory:
// - The daemon answers a connection's requests in order (tickd-protocol(7) RESPONSES), so the
//   requests sent are a FIFO and every reply line belongs to its head. A reply that does not
//   start with the head's request id is not the protocol: the connection is dropped.
// - Backpressure: at most maxInflight requests are written and unanswered; the others wait,
//   unsent, in call order, and are written as answers come back. A caller that outruns the
//   daemon therefore waits for its answer rather than filling the socket, and a bulk loader
//   waits for room() before it makes more requests.
// - Writes are gathered and written once per tick (one write for a burst of calls).
// - A request that times out or is aborted settles at once; if it was sent, its slot stays in
//   the FIFO and its answer is read past when it comes.
// - A lost connection: each sent read that handed nothing out goes back to the head of the
//   waiting line, to be sent again after the reconnect; each sent write fails with
//   MaybeAppliedError (its answer is lost, not necessarily its effect). Waiting requests
//   wait for the reconnect, as long as their timeout allows. retryStrategy decides when to
//   try the addresses again, or to give up (then everything pending fails).
// - AUTH refused ends the client: the token does not get better by retrying.
import { EventEmitter } from 'node:events';
import { Fifo } from '../domain/fifo.ts';
import { authError, openConnection, type Connection } from './connection.ts';
import { AbortError, AuthError, ClosedError, ConnectionError, MaybeAppliedError, ProtocolError, TickdError, TimeoutError } from './errors.ts';
import type { Endpoint, Settings } from './options.ts';
import { SENT, SETTLED, WAITING, type CallOptions, type Pending } from './pending.ts';

export type ClientStatus = 'connecting' | 'ready' | 'reconnecting' | 'closing' | 'end';

const WRITE_CHUNK = 64 * 1024;

export class Core extends EventEmitter {
  protected readonly settings: Settings;
  #status: ClientStatus = 'connecting';
  #conn: Connection | null = null;
  readonly #waiting = new Fifo<Pending>();
  readonly #inflight = new Fifo<Pending>();
  #nextRid = 1;
  #flushQueued = false;
  #attempt = 0;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #endError: TickdError | null = null;
  #roomWaiters: Array<{ resolve: () => void; reject: (e: TickdError) => void }> = [];
  #idleWaiters: Array<() => void> = [];
  #paused: Pending | null = null;

  constructor(settings: Settings) {
    super();
    this.settings = settings;
  }

  get status(): ClientStatus {
    return this.#status;
  }

  /** The address of the connection in use; null between connections. */
  get endpoint(): Endpoint | null {
    return this.#conn?.endpoint ?? null;
  }

  /** Requests written and not answered, and requests waiting to be written. */
  get pending(): { readonly inflight: number; readonly waiting: number } {
    return { inflight: this.#inflight.length, waiting: this.#waiting.length };
  }

  /** The first connection: rejects (and the client ends) when no address accepts. */
  protected async start(): Promise<void> {
    let conn: Connection;
    try {
      conn = await openConnection(this.settings, (ep) => this.emit('connect', ep));
    } catch (err) {
      this.#end(err as TickdError, false);
      throw err;
    }
    this.#attach(conn);
  }

  /** Queues a request; it is written once there is room and a connection. */
  enqueue(p: Pending, opts: CallOptions | undefined): void {
    if (this.#status === 'end' || this.#status === 'closing') {
      p.state = SETTLED;
      p.fail(this.#endError ?? new ClosedError());
      return;
    }
    const signal = opts?.signal;
    if (signal !== undefined) {
      if (signal.aborted) {
        p.state = SETTLED;
        p.fail(new AbortError(`${p.verb} aborted before it was sent`, false, signal.reason));
        return;
      }
      const onAbort = () => this.#settle(p, new AbortError(`${p.verb} aborted${p.state === SENT && p.write ? ' after it was sent: it may have been applied' : ''}`, p.state === SENT && p.write, signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      p.unlisten = () => signal.removeEventListener('abort', onAbort);
    }
    const ms = opts?.timeout ?? this.settings.timeoutMs;
    if (ms > 0) {
      p.timer = setTimeout(() => {
        const maybe = p.state === SENT && p.write;
        this.#settle(p, new TimeoutError(`no answer to ${p.verb} within ${ms} ms${maybe ? ': it may have been applied' : ''}`, maybe));
      }, ms);
    }
    this.#waiting.push(p);
    if (!this.#flushQueued && this.#conn !== null) {
      this.#flushQueued = true;
      process.nextTick(() => {
        this.#flushQueued = false;
        this.#pump();
      });
    }
  }

  /**
   * Resolves once at most half of maxInflight requests wait unsent: a bulk loader's pace (it
   * then adds a batch, not one request per answer).
   */
  room(): Promise<void> {
    if (this.#endError !== null) return Promise.reject(this.#endError);
    if (this.#waiting.length <= this.settings.maxInflight / 2) return Promise.resolve();
    return new Promise((resolve, reject) => this.#roomWaiters.push({ resolve, reject }));
  }

  /** Stops reading replies for `p` (its consumer is behind); its timer stops meanwhile. */
  pauseFor(p: Pending): void {
    if (this.#paused !== null || this.#conn === null) return;
    this.#paused = p;
    clearTimeout(p.timer);
    this.#conn.pause();
  }

  resumeFor(p: Pending): void {
    if (this.#paused !== p) return;
    this.#paused = null;
    if (p.state === SENT) p.timer?.refresh();
    this.#conn?.resume();
  }

  /** Settles `p` with `err` unless it is settled already; what is sent stays to be read past. */
  cancel(p: Pending, err: TickdError): void {
    this.#settle(p, err);
  }

  /**
   * Ends the client cleanly: new calls fail with ClosedError, those pending are answered (or
   * time out), then the connection closes. Resolves once it has.
   */
  async close(): Promise<void> {
    if (this.#status === 'end') return;
    if (this.#status !== 'closing') {
      this.#status = 'closing';
      if (this.#conn === null) {
        this.#end(new ClosedError(), false);
        return;
      }
      if (this.#inflight.length > 0 || this.#waiting.length > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
      this.#conn?.close(true);
      if ((this.#status as ClientStatus) !== 'end') this.#end(new ClosedError(), false);
    } else {
      await new Promise<void>((resolve) => this.once('end', resolve));
    }
  }

  /** Ends the client now: everything pending fails with ClosedError (sent writes: maybeApplied). */
  destroy(): void {
    if (this.#status === 'end') return;
    this.#status = 'closing';
    const conn = this.#conn;
    if (conn !== null) conn.close(false);
    else this.#end(new ClosedError(), false);
  }

  #attach(conn: Connection): void {
    this.#conn = conn;
    this.#attempt = 0;
    conn.attach({ line: (l) => this.#onLine(conn, l), closed: (err) => this.#onClosed(conn, err) });
    conn.socket.on('drain', () => this.#pump());
    if (this.#status !== 'closing') this.#status = 'ready';
    this.emit('ready', conn.endpoint);
    this.#pump();
  }

  #settle(p: Pending, err: TickdError): void {
    if (p.state === SETTLED) return;
    p.state = SETTLED;
    clearTimeout(p.timer);
    p.unlisten?.();
    if (this.#paused === p) this.resumeFor(p);
    p.fail(err);
  }

  #pump(): void {
    const conn = this.#conn;
    if (conn === null) return;
    const max = this.settings.maxInflight;
    let out = '';
    while (this.#inflight.length < max) {
      const p = this.#waiting.shift();
      if (p === undefined) break;
      if (p.state === SETTLED) continue;
      p.rid = `c${this.#nextRid++}`;
      p.state = SENT;
      this.#inflight.push(p);
      out += `${p.rid} ${p.text}\n`;
      if (out.length >= WRITE_CHUNK) {
        conn.write(out);
        out = '';
      }
    }
    if (out !== '') conn.write(out);
    if (this.#roomWaiters.length > 0 && this.#waiting.length <= max / 2) {
      const w = this.#roomWaiters;
      this.#roomWaiters = [];
      for (const r of w) r.resolve();
    }
    this.#checkIdle();
  }

  #checkIdle(): void {
    if (this.#idleWaiters.length > 0 && this.#inflight.length === 0 && this.#waiting.length === 0) {
      const w = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const r of w) r();
    }
  }

  #onLine(conn: Connection, line: string): void {
    const p = this.#inflight.peek();
    const rid = p?.rid ?? '';
    if (p !== undefined && line.length > rid.length && line.charCodeAt(rid.length) === 32 && line.startsWith(rid)) {
      if (p.line(line.slice(rid.length + 1))) {
        this.#inflight.shift();
        if (p.state !== SETTLED) {
          p.state = SETTLED;
          clearTimeout(p.timer);
          p.unlisten?.();
        }
        if (this.#waiting.length > 0 || this.#idleWaiters.length > 0) this.#schedulePump();
      } else if (p.idleTimer && this.#paused !== p) {
        p.timer?.refresh();
      }
      return;
    }
    if (line === 'ERROR auth_required' || line === 'ERROR auth_failed') conn.fail(authError(conn.endpoint, line));
    else conn.fail(new ProtocolError(`unexpected reply from ${conn.endpoint.text} (${p === undefined ? 'no request pending' : `expected request ${rid}`}): ${JSON.stringify(line.slice(0, 80))}`));
  }

  #schedulePump(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    setImmediate(() => {
      this.#flushQueued = false;
      this.#pump();
    });
  }

  #onClosed(conn: Connection, err: TickdError | null): void {
    if (this.#conn !== conn) return;
    this.#conn = null;
    this.#paused = null;
    this.emit('close', err ?? undefined);
    const resend: Pending[] = [];
    const where = conn.endpoint.text;
    for (const p of this.#inflight.drain()) {
      if (p.state !== SENT) continue;
      if (p.resendable() && err !== null) {
        p.state = WAITING;
        resend.push(p);
      } else if (p.write) {
        this.#settle(p, err === null
          ? new ClosedError(`the client was closed before the answer to ${p.verb}: it may have been applied`, true)
          : new MaybeAppliedError(`the connection to ${where} was lost before the answer to ${p.verb}: it may have been applied (not re-sent)`, { cause: err }));
      } else {
        this.#settle(p, err ?? new ClosedError());
      }
    }
    if (resend.length > 0) {
      const rest = this.#waiting.drain();
      for (const p of resend) this.#waiting.push(p);
      for (const p of rest) this.#waiting.push(p);
    }
    if (err === null || this.#status === 'closing') this.#end(new ClosedError(), false);
    else if (err instanceof AuthError) this.#end(err, true);
    else {
      this.#emitError(err);
      this.#reconnect(err);
    }
  }

  #reconnect(last: TickdError): void {
    this.#attempt++;
    const delay = this.settings.retryStrategy(this.#attempt);
    if (delay === null || this.#status === 'closing') {
      // Without a single retry (a strategy that never reconnects) the loss itself is the reason.
      this.#end(this.#attempt === 1 ? last : new ConnectionError(`gave up reconnecting after ${this.#attempt - 1} attempts: ${last.message}`, { cause: last }), false);
      return;
    }
    this.#status = 'reconnecting';
    this.emit('reconnecting', { attempt: this.#attempt, delay });
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      openConnection(this.settings, (ep) => this.emit('connect', ep)).then((conn) => {
        if (this.#status === 'end' || this.#status === 'closing') {
          conn.close(false);
          if (this.#status === 'closing') this.#end(new ClosedError(), false);
        } else {
          this.#attach(conn);
        }
      }, (e: TickdError) => {
        if (this.#status === 'end') return;
        if (e instanceof AuthError) {
          this.#end(e, true);
          return;
        }
        this.#emitError(e);
        this.#reconnect(e);
      });
    }, delay);
  }

  /** The client is over: every request still pending fails with `err`. */
  #end(err: TickdError, emit: boolean): void {
    if (this.#status === 'end') return;
    this.#status = 'end';
    this.#endError = err;
    clearTimeout(this.#reconnectTimer);
    for (const p of this.#inflight.drain()) this.#settle(p, err);
    for (const p of this.#waiting.drain()) this.#settle(p, err);
    for (const w of this.#roomWaiters) w.reject(err);
    this.#roomWaiters = [];
    for (const w of this.#idleWaiters) w();
    this.#idleWaiters = [];
    if (emit) this.#emitError(err);
    this.emit('end');
  }

  /** An error nobody awaits: the 'error' event, or a process warning when nobody listens (never dropped). */
  #emitError(err: TickdError): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else process.emitWarning(`tickd client: ${err.message}`, { code: `TICKD_${err.code.toUpperCase()}` });
  }
}
