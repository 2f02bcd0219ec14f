// The primary's side of ONE runner child process (cluster/runner-child.ts; messages in
// cluster/ipc/runner-messages.ts): forks it with a small fixed heap, sends it execution
// requests in one 'execute' message per event-loop turn (ipc/channel.ts TurnFlush; the first
// after an idle spell at once, alone), keeps every request it sent until
// its response comes back, and tells its owner (runner-processes.ts) of each start, each
// response, and of the requests a dead child leaves unanswered.
//
// Invariants:
// - Every request sent ends in exactly one of: events.finished (its response), events.lost
//   (the child died first) or events.abandoned (a stop gave up on it, or it was never
//   started before the stop). events.started comes at most once, and never after the end.
// - Death is acted on at 'close' (the process exited AND its channel closed), so every
//   message the child sent before dying has been read first.
// - After stop() or kill() the link sends nothing more; a link is used for one child only.
import { ChildProcess, fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Execution } from '../lib/runner/execution.ts';
import type { NetworkKind, RunnerSpec } from '../lib/domain/runner-spec.ts';
import type { ExecutionRequest, ExecutionResponse, FromRunnerChild, RunnerInit, ToRunnerChild } from './ipc/runner-messages.ts';
import { TurnFlush } from './ipc/channel.ts';

// runner-child.ts in the sources, runner-child.js in an installed package (as WORKER_ENTRY in supervisor.ts).
const CHILD_ENTRY = fileURLToPath(new URL(`./runner-child${extname(import.meta.url)}`, import.meta.url));

/** After a stop's grace period, how long a child gets to report and exit before SIGKILL. */
export const STOP_MARGIN_MS = 2000;

/** A request the child has not answered yet. */
export interface Sent {
  readonly exec: Execution;
  /** Wall time the primary handed it over, epoch ns. */
  readonly sentNs: bigint;
  /** Wall time its runner started, once the child said so. */
  startedNs: bigint | null;
}

export interface LinkEvents {
  started(sent: Sent): void;
  finished(sent: Sent, response: ExecutionResponse): void;
  /** The child died (not during a stop): these requests will never be answered. */
  lost(link: RunnerLink, unanswered: Sent[], code: number | null, signal: NodeJS.Signals | null): void;
  /** A stop gave up on these (`response` from the child when it had started them). */
  abandoned(sent: Sent, response: ExecutionResponse | null): void;
}

export interface LinkOptions {
  readonly init: RunnerInit;
  /** V8's old-space limit of the child, MB. */
  readonly heapMb: number;
  readonly events: LinkEvents;
  /** Test seam: starts the child (default: fork of runner-child). */
  readonly fork?: (heapMb: number) => ChildProcess;
}

function forkChild(heapMb: number): ChildProcess {
  return fork(CHILD_ENTRY, [], {
    // A bounded young generation: a scavenge that grew it past the old-space limit left the
    // child running a mark-compact every ~10 ms (300 in one lateness run), each a CPU taken
    // from the primary's tick on a two-core machine.
    execArgv: [`--max-old-space-size=${heapMb}`, '--max-semi-space-size=8'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

export class RunnerLink {
  readonly child: ChildProcess;
  readonly bornAt = Date.now();
  private readonly events: LinkEvents;
  private readonly sent = new Map<string, Sent>();
  private outbox: ExecutionRequest[] = [];
  private readonly turn = new TurnFlush(() => this.flush());
  private stopping: Promise<void> | null = null;
  private closed = false;
  private onClosed: (() => void) | null = null;
  /** fork() threw: nothing is handed to it while its loss is reported on the next tick. */
  private unborn = false;

  constructor(opts: LinkOptions) {
    this.events = opts.events;
    try {
      this.child = (opts.fork ?? forkChild)(opts.heapMb);
    } catch {
      // fork() throws for errors other than the few it reports as 'error' (ENOMEM after a
      // child died of memory, say): a child that never was, lost at once like a failed fork,
      // so the owner's backoff tries again instead of the primary dying of the exception.
      this.child = new ChildProcess();
      this.unborn = true;
      process.nextTick(() => this.close(null, null));
    }
    this.child.on('message', (msg: FromRunnerChild) => this.receive(msg));
    // A failed fork (EAGAIN...) emits 'error' and may never emit 'close'.
    this.child.on('error', () => { if (this.child.pid === undefined) this.close(null, null); });
    this.child.on('close', (code: number | null, signal: NodeJS.Signals | null) => this.close(code, signal));
    this.post({ t: 'init', init: opts.init });
  }

  /** Requests sent and not answered. */
  get load(): number {
    return this.sent.size;
  }

  /** Whether it takes requests: forked, alive, not stopping. */
  get usable(): boolean {
    return !this.closed && !this.unborn && this.stopping === null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  send(exec: Execution, nowNs: bigint): void {
    // The child was idle: this request leaves at once, alone, and its runner starts while the
    // primary is still firing the rest of the burst (batched at the turn's end as usual).
    const first = this.sent.size === 0;
    this.sent.set(exec.attempt, { exec, sentNs: nowNs, startedNs: null });
    this.outbox.push(exec); // the request's fields (and the rule's id): no copy to make and collect
    if (first) this.flush();
    else this.turn.added(this.outbox.length);
  }

  private flush(): void {
    if (this.outbox.length === 0) return;
    const requests = this.outbox;
    this.outbox = [];
    this.post({ t: 'execute', requests });
  }

  /** Tells the child of the next due job's runner and due time (lib/engine/lookahead.ts). */
  prepare(runner: RunnerSpec, awakeNs: bigint | null): void {
    if (this.usable) this.post({ t: 'prepare', runner, awakeNs });
  }

  /** Tells the child of network runner kinds a rule now uses: it loads their modules. */
  loadKinds(kinds: readonly NetworkKind[]): void {
    if (this.usable) this.post({ t: 'load', kinds });
  }

  /**
   * Asks the child to stop: what runs gets graceMs, then it is aborted. Resolves once the
   * child has exited; a child that has not after graceMs + STOP_MARGIN_MS is killed. Requests
   * of this turn not sent yet are abandoned here (sending them would start runners only to
   * abort them). A child then holding nothing is killed at once: there is nothing to wait
   * for, and a child still loading its modules (a stop right after the start) would answer
   * 'stop' only once it has.
   */
  stop(graceMs: number): Promise<void> {
    if (this.stopping !== null) return this.stopping;
    let resolve!: () => void;
    this.stopping = new Promise<void>((r) => { resolve = r; }); // set first: 'close' may come at once
    if (this.closed) {
      resolve();
      return this.stopping;
    }
    const unsent = this.outbox;
    this.outbox = [];
    for (const exec of unsent) {
      const s = this.sent.get(exec.attempt);
      if (s === undefined) continue;
      this.sent.delete(exec.attempt);
      this.events.abandoned(s, null);
    }
    if (this.sent.size === 0) {
      this.onClosed = resolve;
      this.child.kill('SIGKILL');
      return this.stopping;
    }
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs + STOP_MARGIN_MS);
    this.onClosed = () => { clearTimeout(timer); resolve(); };
    this.post({ t: 'stop', graceMs });
    return this.stopping;
  }

  /** Kills the child at once (an abandoned start-up); what it held is reported abandoned. */
  kill(): void {
    this.stopping ??= Promise.resolve();
    this.child.kill('SIGKILL');
  }

  private post(msg: ToRunnerChild): void {
    if (!this.child.connected) return; // dead: 'close' settles what it held
    this.child.send(msg, (err: Error | null) => {
      void err; // the child is gone: 'close' follows and settles what was sent
    });
  }

  private receive(msg: FromRunnerChild): void {
    switch (msg.t) {
      case 'progress': {
        const { attempts, startedNs } = msg.started;
        for (let i = 0; i < attempts.length; i++) {
          const s = this.sent.get(attempts[i]!);
          if (s === undefined || s.startedNs !== null) continue;
          s.startedNs = startedNs[i]!;
          this.events.started(s);
        }
        for (const r of msg.responses) {
          const s = this.settle(r.attempt);
          if (s !== undefined) this.events.finished(s, r);
        }
        return;
      }
      case 'stopped':
        for (const r of msg.abandoned) {
          const s = this.settle(r.attempt);
          if (s !== undefined) this.events.abandoned(s, r);
        }
        return;
      default: {
        const never: never = msg;
        void never; // a child of another version? Nothing of it can be acted on.
      }
    }
  }

  /** The execution sent under `attempt`, no longer held (undefined if it was not, or not any more). */
  private settle(attempt: string): Sent | undefined {
    const s = this.sent.get(attempt);
    if (s !== undefined) this.sent.delete(attempt);
    return s;
  }

  private close(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closed) return;
    this.closed = true;
    const left = [...this.sent.values()];
    this.sent.clear();
    this.outbox = [];
    if (this.stopping !== null) {
      // Stopping: whatever it still held (queued in the child, or its report lost) was not run to
      // the end, and its job stays `triggered` like every other execution a stop cuts short.
      for (const s of left) this.events.abandoned(s, null);
    } else {
      this.events.lost(this, left, code, signal);
    }
    this.onClosed?.();
  }
}
