// A node's side of execution placement (tickd(8) CLUSTER MODE "Where jobs run"): in cluster
// mode every node runs what the leader sends it, in its own runner processes, whatever its
// role, and sends each result to whoever leads when it finishes.
//
// Invariants:
// - An attempt runs here at most once: the leader may send a run again when its first answer
//   was lost, so the attempts running, holding a result, or finished lately are recognised.
// - A result is held until a leader took it: a leader that changes meanwhile does not lose it
//   (it is sent again, every RESEND_MS, to whoever leads), and a new leader's census hears of
//   it and of every attempt still running, so it adopts them instead of running them again.
// - While this node leads, its own results go straight to its engine (no NATS round trip).
import type { Subscription } from '@nats-io/transport-node';
import type { Attempt } from '../domain/attempt.ts';
import type { Execution } from '../runner/execution.ts';
import { heldOf, readExecRequest, readTaken, type HeldAttempt, type PlacedResult } from './messages.ts';
import { ask, encode, EXEC_CONTEXT, execSubject, NO_ANSWER, NOBODY, RESULTS_CONTEXT, resultsSubject, serve, type WireParts } from './wire.ts';

const RESEND_MS = 250;
/**
 * A run sealed longer ago than this (by this node's clock) is refused: this node was stopped or
 * cut off meanwhile, and the leader may have given it away already (it does once the node has
 * been silent for 10 s). Half of that, so that a run this node takes was sealed while it was
 * still heard of. The leader places a refused run elsewhere.
 */
export const RUN_FRESH_MS = 5_000;
const ANSWER_WAIT_MS = 5_000;
/** Finished attempts remembered (a run sent again is not run twice). */
const RECENT = 100_000;
/** Results sent in one message at most. */
const RESULTS_PER_MESSAGE = 1024;

export interface ExecutorParts extends WireParts {
  readonly node: string;
  /** This process's address (wire.ts executorAddress): what the leader's runs must be addressed to. */
  readonly address: string;
  /** Hands an execution to this node's runner processes. */
  readonly submit: (exec: Execution) => void;
  /** While this node leads: where its engine takes a result; null otherwise. */
  readonly leading: () => ((r: PlacedResult) => void) | null;
}

export class Executor {
  private readonly p: ExecutorParts;
  private readonly running = new Map<string, Execution>();
  /** Results no leader took yet, with what a census says of their attempts. */
  private readonly unsent = new Map<string, { readonly r: PlacedResult; readonly h: HeldAttempt }>();
  private readonly recent = new Set<string>();
  private sub: Subscription | null = null;
  private sending = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(parts: ExecutorParts) {
    this.p = parts;
  }

  /** Whether this node takes runs (not once a stop began). */
  get taking(): boolean {
    return this.sub !== null;
  }

  /** Executions running here now. */
  get count(): number {
    return this.running.size;
  }

  /** Starts taking the leader's runs and census requests. */
  start(): void {
    this.sub = serve(this.p, execSubject(this.p.cluster, this.p.node), this.p.address, EXEC_CONTEXT, (payload, answer, sealedAt) => {
      const req = readExecRequest(payload);
      if (req === null) return answer(null);
      if (req.op === 'census') return answer({ held: this.held() });
      if (Date.now() - sealedAt > RUN_FRESH_MS) {
        this.p.log.warn({ ageMs: Date.now() - sealedAt, executions: req.execs.length }, 'runs sealed too long ago (this node was stopped, or its clock is off): refused, the leader places them elsewhere');
        return answer({ taken: 0, stale: true });
      }
      let taken = 0;
      for (const exec of req.execs) if (this.run(exec)) taken++;
      answer({ taken });
    });
  }

  /** Runs `exec` here unless this node knows it already; false then. */
  run(exec: Execution): boolean {
    if (this.sub === null || this.running.has(exec.attempt) || this.unsent.has(exec.attempt) || this.recent.has(exec.attempt)) return false;
    this.running.set(exec.attempt, exec);
    this.p.submit(exec);
    return true;
  }

  /** The runner processes reported an attempt run here (`record` without the node: added here). */
  push(jobId: string, attempt: string, success: boolean, record?: Attempt): void {
    const exec = this.running.get(attempt);
    if (exec === undefined || record === undefined) return;
    this.running.delete(attempt);
    this.remember(attempt);
    const r: PlacedResult = { jobId, attempt, success, record: { ...record, node: this.p.node } };
    const take = this.p.leading();
    if (take !== null && this.unsent.size === 0) return take(r);
    this.unsent.set(r.attempt, { r, h: heldOf(exec) });
    this.flushSoon(0);
  }

  /** What this node runs, or ran and holds the result of (a census answer). */
  held(): HeldAttempt[] {
    return [...[...this.running.values()].map(heldOf), ...[...this.unsent.values()].map((u) => u.h)];
  }

  private remember(attempt: string): void {
    this.recent.add(attempt);
    if (this.recent.size > RECENT) this.recent.delete(this.recent.values().next().value!);
  }

  private flushSoon(ms: number): void {
    if (this.sending || this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
  }

  /** Sends the results held to whoever leads, until none is held; one message at a time. */
  private async flush(): Promise<void> {
    this.sending = true;
    try {
      while (this.unsent.size > 0 && !this.closed) {
        const take = this.p.leading();
        if (take !== null) {
          for (const u of this.unsent.values()) take(u.r);
          this.unsent.clear();
          return;
        }
        let results = [...this.unsent.values()].slice(0, RESULTS_PER_MESSAGE).map((u) => u.r);
        let message = encode(this.p, { node: this.p.node, results });
        while (results.length > 1 && !message.fits) {
          results = results.slice(0, results.length >> 1);
          message = encode(this.p, { node: this.p.node, results });
        }
        const answer = await ask(this.p, resultsSubject(this.p.cluster), '', RESULTS_CONTEXT, message, ANSWER_WAIT_MS);
        const taken = answer === NOBODY || answer === NO_ANSWER ? null : readTaken(answer);
        if (taken === null || taken.length === 0) {
          this.sending = false;
          this.flushSoon(RESEND_MS); // no leader now (a failover), or it did not answer: again
          return;
        }
        for (const a of taken) this.unsent.delete(a);
      }
    } finally {
      this.sending = false;
    }
  }

  /** Stops taking runs (a leader sending one more finds nobody, and places it elsewhere); what runs still finishes. */
  stopTaking(): void {
    void this.sub?.drain().catch(() => {});
    this.sub = null;
  }

  /**
   * A stop's last step before the NATS connection closes: the results held are sent, for at
   * most `ms` (one not taken by then is lost with this node, and its job runs again elsewhere).
   */
  async settle(ms: number): Promise<void> {
    this.stopTaking();
    const until = performance.now() + ms;
    while (this.unsent.size > 0 && performance.now() < until) {
      this.flushSoon(0);
      await new Promise((r) => setTimeout(r, 50));
    }
    this.closed = true;
    clearTimeout(this.timer);
  }
}
