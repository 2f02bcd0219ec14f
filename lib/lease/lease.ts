// The leader lease: one key in the cluster's lease bucket (bucket.ts), created only when
// absent, refreshed by compare-and-set on its revision, deleted by revision on shutdown.
// Whoever holds it is the one node allowed to fire jobs and write the journal.
//
// Theory (times on OUR monotonic clock, never the wall clock):
//
//   acquire: create(key) sent at s0 ──ok──► held until s0 + ttl
//   refresh: every ttl/3 after the last send, update(key, rev) sent at sN ──ok──► held until sN + ttl
//   the server drops the key max_age (>= ttl) after it STORED the last write, which is after
//   we SENT it: so our claim always ends before anyone else can create the key. (This assumes
//   our clock and the server's run at about the same rate; the margin is the request's
//   latency. A server clock stepped forward can expire the key early; the journal's own
//   expected-sequence check is the second fence against that.)
//
// Invariants:
// - `held` is computed from the clock on every read, never from timers alone: after an
//   event-loop stall (SIGSTOP, a long GC) it is false at once if the TTL passed, before any
//   timer callback has had a chance to run. Reading it in that state starts the step-down.
// - Leadership ends exactly once per tenure, through lose(): a refresh refused (someone else
//   wrote the key, or it expired), or our clock passing the last successful send + ttl (the
//   watchdog, or any read of `held`). A refresh that errs or times out is tried again while
//   the claim lasts, so the election of a new leader for the bucket (one NATS server lost)
//   does not end a tenure that a retry a second later would have kept. onLost gets the reason,
//   from a microtask so it never runs inside a caller's `held` check. There is no retry as
//   leader: a lost lease must be acquired again from scratch.
// - release() and close() end the tenure without onLost. release() waits for a refresh in
//   flight, then deletes the key only if it still holds our revision.
// - At most one refresh is in flight per tenure (one of an ended tenure may still hang; its
//   answer is ignored, and its compare-and-set cannot succeed past a newer write). Every
//   timer is unref()'d.
// - The watchdog works even when a refresh hangs: it is a separate timer set for the claim's
//   end, and a refresh's own request timeout is the claim's remaining time (plus a little).
import type { KV } from '@nats-io/kv';
import type { Logger } from '../log.ts';
import { describeError, isWrongLastSequence, LeaseAbortedError } from './errors.ts';
import { LeaseKey } from './key.ts';
import { describeHolder } from './value.ts';

export { openLeaseBucket, leaseBucketName } from './bucket.ts';
export { isLeaseAborted, LeaseAbortedError } from './errors.ts';

/** Pause between refresh attempts that went unanswered, within the claim. */
const REFRESH_RETRY_MS = 100;

export interface LeaseOptions {
  /** The cluster's lease bucket (openLeaseBucket). */
  readonly kv: KV;
  /** Default 'leader'. */
  readonly key?: string;
  /** Who we are, for the logs of others: `${nodeName}/${pid}/...`; stored in the value. */
  readonly holder: string;
  /** The node's name for the stored value; default: `holder` up to its first '/'. */
  readonly node?: string;
  readonly ttlMs: number;
  readonly log: Logger;
  /** Default performance.now(); tests inject a fake. */
  readonly monotonicMs?: () => number;
  /** Called once when held leadership ends for any reason but release()/close(). */
  readonly onLost: (why: string) => void;
}

type Phase = 'idle' | 'acquiring' | 'held' | 'lost' | 'closed';

export class Lease {
  readonly #key: LeaseKey;
  readonly #ttl: number;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #onLost: (why: string) => void;

  #phase: Phase = 'idle';
  /** Bumped at each new tenure so late answers of an older one are recognised. */
  #tenure = 0;
  /** Our last known revision of the key (kept after the tenure, for release()). */
  #revision = 0;
  #lastSentAt = 0;
  #validUntil = 0;
  #value = '';
  #refreshTimer: NodeJS.Timeout | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #inflight: Promise<void> | null = null;
  /** Ends acquire()'s current wait early (close, release). */
  #wake: (() => void) | null = null;

  constructor(opts: LeaseOptions) {
    if (!(opts.ttlMs > 0)) throw new Error(`lease TTL must be positive, got ${opts.ttlMs}`);
    const key = opts.key ?? 'leader';
    this.#ttl = opts.ttlMs;
    this.#now = opts.monotonicMs ?? (() => performance.now());
    this.#onLost = opts.onLost;
    this.#log = opts.log.child({ component: 'lease', key, holder: opts.holder });
    this.#key = new LeaseKey(opts.kv, key, opts.node ?? opts.holder.split('/')[0]!, opts.holder, this.#log);
  }

  /** True while held by our own monotonic clock: the last successful write was SENT less than ttl ago. */
  get held(): boolean {
    return this.#check();
  }

  /** The monotonic time (our clock) at which `held` turns false unless a refresh succeeds; null when not held. */
  get heldUntil(): number | null {
    return this.#check() ? this.#validUntil : null;
  }

  /**
   * Waits until this node holds the lease: tries create() at once, then at least every
   * ttl/4, for as long as it takes. Rejects with LeaseAbortedError once `stopped()` is true
   * or the lease is closed. Usable again after the lease was lost.
   */
  async acquire(stopped: () => boolean): Promise<void> {
    if (this.#phase === 'held' || this.#phase === 'acquiring') throw new Error(`lease is already ${this.#phase}`);
    if (this.#phase === 'closed') throw new LeaseAbortedError();
    this.#phase = 'acquiring';
    const waitStart = this.#now();
    // Error kinds and holders already logged during this wait: each is told once.
    const logged = new Set<string>();
    try {
      for (;;) {
        if (stopped() || this.#phase !== 'acquiring') throw new LeaseAbortedError();
        const tryStart = this.#now();
        this.#value = this.#key.newValue();
        const sentAt = this.#now();
        const revision = await this.#key.create(this.#value, logged);
        if (revision !== null) {
          if (stopped() || this.#phase !== 'acquiring') {
            // Taken while we were being stopped: give it straight back, never act on it.
            await this.#key.tryDelete(revision);
            throw new LeaseAbortedError();
          }
          if (this.#now() < sentAt + this.#ttl) {
            this.#hold(revision, sentAt);
            this.#log.info({ revision, waitedMs: Math.round(this.#now() - waitStart) }, 'lease acquired');
            return;
          }
          // The create took longer than a TTL: our claim ended before we knew we had it.
          this.#log.warn({ revision }, 'lease create answered after the TTL; dropping it');
          await this.#key.tryDelete(revision);
          continue;
        }
        const entry = await this.#key.read(logged);
        if (entry !== null && this.#key.isOurs(entry)) {
          // A create or refresh of ours that timed out on our side but landed. We never acted
          // on it (we are not holding), so dropping it is safe and spares us a TTL of waiting.
          this.#log.info({ revision: entry.revision }, 'lease key holds a leftover of ours; deleting it');
          if (await this.#key.tryDelete(entry.revision)) continue;
        } else if (entry !== null) {
          const who = describeHolder(entry);
          if (!logged.has(`holder:${who.holder}`)) {
            logged.add(`holder:${who.holder}`);
            this.#log.info({ heldBy: who.holder, heldByNode: who.node, since: who.since, revision: entry.revision },
              'lease held by another node; waiting');
          }
        }
        await this.#sleep(tryStart + this.#ttl / 4 - this.#now());
      }
    } finally {
      if (this.#phase === 'acquiring') this.#phase = 'idle';
      this.#wake = null;
    }
  }

  /** Deletes the key only if it still holds our revision; no more refreshes; onLost is not called. Never rejects. */
  async release(): Promise<void> {
    const wasHeld = this.#check();
    this.#end();
    // A refresh in flight may still move the revision: wait for its answer first.
    await this.#inflight;
    const revision = this.#revision;
    this.#revision = 0;
    if (revision === 0) return;
    try {
      await this.#key.delete(revision);
      this.#log.info({ revision, wasHeld }, 'lease released');
      return;
    } catch (err) {
      if (!isWrongLastSequence(err)) {
        this.#log.warn({ revision, err: describeError(err) }, 'lease release failed; the key expires by its TTL');
        return;
      }
    }
    // Someone else's by now, or expired; or ours under a revision we never heard of (a
    // refresh that timed out on our side but landed): that one we still hand back.
    const entry = await this.#key.read(new Set());
    if (entry !== null && this.#key.isOurs(entry) && await this.#key.tryDelete(entry.revision)) {
      this.#log.info({ revision: entry.revision, wasHeld }, 'lease released');
    } else {
      this.#log.info({ revision, wasHeld }, 'lease not released: the key no longer holds our revision');
    }
  }

  /** Stops timers and any acquire() without touching the key; onLost is not called. */
  close(): void {
    this.#end();
  }

  #end(): void {
    this.#phase = 'closed';
    this.#clearTimers();
    this.#wake?.();
  }

  #hold(revision: number, sentAt: number): void {
    this.#tenure++;
    this.#phase = 'held';
    this.#revision = revision;
    this.#lastSentAt = sentAt;
    this.#validUntil = sentAt + this.#ttl;
    this.#armTimers();
  }

  /** `held`, from the clock; starts the step-down when the clock says the claim ran out. */
  #check(): boolean {
    if (this.#phase !== 'held') return false;
    if (this.#now() < this.#validUntil) return true;
    this.#lose('expired by our own clock');
    return false;
  }

  #lose(why: string): void {
    if (this.#phase !== 'held') return;
    this.#phase = 'lost';
    this.#clearTimers();
    this.#log.warn({ why, revision: this.#revision }, 'lease lost');
    queueMicrotask(() => this.#onLost(why));
  }

  #armTimers(): void {
    this.#armWatchdog();
    clearTimeout(this.#refreshTimer);
    const tenure = this.#tenure;
    // Armed only at the start of a tenure and after a refresh of it has answered, so a tenure
    // never has two refreshes in flight. (One of an ended tenure may still hang: ignore it.)
    this.#refreshTimer = setTimeout(() => {
      if (tenure !== this.#tenure) return;
      const p: Promise<void> = this.#refresh(tenure).finally(() => { if (this.#inflight === p) this.#inflight = null; });
      this.#inflight = p;
    }, Math.max(0, this.#lastSentAt + this.#ttl / 3 - this.#now()));
    this.#refreshTimer.unref();
  }

  /** Fires when the claim runs out by our clock, whatever the refresh in flight is doing. */
  #armWatchdog(): void {
    clearTimeout(this.#watchdog);
    const tenure = this.#tenure;
    this.#watchdog = setTimeout(() => {
      // A timer may fire a hair early against our clock (or a fake one): then look again later.
      if (tenure === this.#tenure && this.#check()) this.#armWatchdog();
    }, Math.max(0, this.#validUntil - this.#now()));
    this.#watchdog.unref();
  }

  #clearTimers(): void {
    clearTimeout(this.#watchdog);
    clearTimeout(this.#refreshTimer);
    this.#watchdog = this.#refreshTimer = undefined;
  }

  async #refresh(tenure: number): Promise<void> {
    // Set once an attempt went unanswered: it may have landed unseen, moving the revision.
    let uncertain = false;
    for (;;) {
      if (!this.#check()) return; // after a stall, or the claim ran out while retrying: lose() ran
      const sentAt = this.#now();
      // Waiting past our claim's end is pointless: the watchdog ends the tenure then. The small
      // grace lets the watchdog speak first, so a hang is reported as what it is (the clock).
      const timeout = Math.ceil(this.#validUntil - sentAt + this.#ttl / 10);
      let revision: number;
      try {
        revision = await this.#key.update(this.#value, this.#revision, timeout);
      } catch (err) {
        if (tenure !== this.#tenure) return;
        if (isWrongLastSequence(err)) {
          if (uncertain && await this.#adoptOwnWrite(tenure)) continue;
          this.#lose(`refresh refused: the key was changed or removed by someone else (${describeError(err)})`);
          return;
        }
        // Not refused, only not answered (a NATS server lost, the bucket's leader being
        // elected): our claim still runs by our own clock, so try again until it ends.
        uncertain = true;
        this.#log.debug({ err: describeError(err) }, 'lease refresh not answered; trying again within the claim');
        await new Promise((r) => setTimeout(r, Math.min(REFRESH_RETRY_MS, Math.max(0, this.#validUntil - this.#now()))).unref());
        if (tenure !== this.#tenure) return;
        continue;
      }
      if (tenure !== this.#tenure) return;
      // Recorded even when the tenure ended meanwhile, so release() deletes the right revision.
      this.#revision = revision;
      if (this.#phase !== 'held') return;
      this.#lastSentAt = sentAt;
      this.#validUntil = sentAt + this.#ttl;
      // An answer that arrives after a stall may already be too late to extend anything.
      if (this.#check()) this.#armTimers();
      return;
    }
  }

  /**
   * After an unanswered refresh, a refusal may mean that refresh landed: if the key holds our
   * own value, take its revision (the claim is not extended by it: its send time is unknown)
   * and go on refreshing. True when adopted.
   */
  async #adoptOwnWrite(tenure: number): Promise<boolean> {
    const entry = await this.#key.read(new Set());
    if (tenure !== this.#tenure || entry === null || !this.#key.isOurs(entry)) return false;
    this.#revision = entry.revision;
    return true;
  }

  /** Waits `ms` (at least a turn), or until close()/release(). */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => { clearTimeout(t); this.#wake = null; resolve(); };
      const t = setTimeout(done, Math.max(0, ms));
      t.unref();
      this.#wake = done;
    });
  }
}
