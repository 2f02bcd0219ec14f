// Loading many jobs: SETs pipelined from an iterable (or async iterable, such as a file's
// lines), read only as fast as the daemon answers, so memory stays bounded whatever the
// input's size (at most maxInflight requests sent and as many again waiting). One object per
// SET, no promise: a million jobs cost what the protocol costs.
import { quoteArg } from '../domain/arguments.ts';
import type { Core } from './core.ts';
import { ProtocolError, ReplyError, type TickdError } from './errors.ts';
import { Pending, SETTLED } from './pending.ts';
import { toNs, type When } from './time.ts';

/** One job to set: [id, when] or {id, when}. */
export type JobEntry = readonly [string, When] | { readonly id: string; readonly when: When };

export interface SetManyOptions {
  /**
   * Each SET that failed (the daemon's ReplyError, or MaybeAppliedError, TimeoutError...), with
   * its position in the input (0 for the first) and its entry. Without it the load rejects,
   * after everything sent is answered, with the first error.
   */
  readonly onError?: (err: TickdError, index: number, entry: JobEntry) => void;
  /** ms each SET may take, waiting included (the client's timeout by default). */
  readonly timeout?: number;
  readonly signal?: AbortSignal;
}

export interface SetManyResult {
  /** Entries read from the input. */
  readonly sent: number;
  readonly ok: number;
  readonly failed: number;
}

class Tally {
  sent = 0;
  ok = 0;
  failed = 0;
  first: TickdError | null = null;
  idle: (() => void) | null = null;

  readonly onError: SetManyOptions['onError'];

  constructor(onError: SetManyOptions['onError']) {
    this.onError = onError;
  }

  failure(err: TickdError, index: number, entry: JobEntry): void {
    this.failed++;
    if (this.onError !== undefined) this.onError(err, index, entry);
    else this.first ??= err;
    this.settled();
  }

  settled(): void {
    if (this.ok + this.failed === this.sent) this.idle?.();
  }
}

class BulkSet extends Pending {
  readonly tally: Tally;
  readonly index: number;
  readonly entry: JobEntry;

  constructor(text: string, tally: Tally, index: number, entry: JobEntry) {
    super(text, true);
    this.tally = tally;
    this.index = index;
    this.entry = entry;
  }

  line(rest: string): boolean {
    if (this.state === SETTLED) return true;
    const t = this.tally;
    if (rest === 'OK') {
      t.ok++;
      t.settled();
    } else if (rest.startsWith('ERROR ')) {
      const sp = rest.indexOf(' ', 6);
      t.failure(new ReplyError(sp === -1 ? rest.slice(6) : rest.slice(6, sp), sp === -1 ? '' : rest.slice(sp + 1), this.text), this.index, this.entry);
    } else {
      t.failure(new ProtocolError(`unexpected answer to SET: ${JSON.stringify(rest.slice(0, 80))}`), this.index, this.entry);
    }
    return true;
  }

  fail(err: TickdError): void {
    this.tally.failure(err, this.index, this.entry);
  }
}

export async function setMany(core: Core, maxWaiting: number, entries: Iterable<JobEntry> | AsyncIterable<JobEntry>, opts: SetManyOptions = {}): Promise<SetManyResult> {
  const tally = new Tally(opts.onError);
  const callOpts = { ...(opts.timeout === undefined ? {} : { timeout: opts.timeout }), ...(opts.signal === undefined ? {} : { signal: opts.signal }) };
  /** Queues one SET; true when the caller must wait for room before the next. */
  const add = (entry: JobEntry): boolean => {
    const [id, when] = Array.isArray(entry) ? entry as readonly [string, When] : [(entry as { id: string }).id, (entry as { when: When }).when];
    const index = tally.sent++;
    core.enqueue(new BulkSet(`SET ${quoteArg(id)} ${toNs(when)}`, tally, index, entry), callOpts);
    return core.pending.waiting >= maxWaiting;
  };
  // A plain iterable is read without a microtask per entry (for await would add one).
  if (Symbol.iterator in entries) {
    for (const entry of entries) if (add(entry)) await core.room();
  } else {
    for await (const entry of entries) if (add(entry)) await core.room();
  }
  if (tally.ok + tally.failed < tally.sent) await new Promise<void>((resolve) => { tally.idle = resolve; });
  if (tally.first !== null) throw tally.first;
  return { sent: tally.sent, ok: tally.ok, failed: tally.failed };
}
