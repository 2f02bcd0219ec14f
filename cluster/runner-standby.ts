// The runner child's standby before a due instant (tickd(8) "Runner processes"). The primary's
// lookahead (lib/engine/lookahead.ts) tells the child, up to a second ahead, when the next
// job on an http rule is due. From LEAD_MS before that instant until the first execution
// request arrives (TAIL_MS after it at the latest) the child keeps its event loop turning
// (setImmediate: each turn polls its channel without sleeping) instead of waiting in epoll.
//
// Why: measured on a two-vCPU VM, a process that has slept for a second pays for it on its
// next wake-up: a bare IPC message took 0.6 ms (up to 4 ms) to be read after 300 ms of quiet,
// 0.24 ms after 5 ms; a fixed piece of JS ran 160-400 us after 1.5 s idle and 8 us warm. At a
// burst's start the child's part (the primary's send -> request written) was 5-8 ms of a
// first POST at 8-14 ms after T (5 runs, probes); awake, 2.0-2.8 ms of 5.6-7.0 ms (3 runs).
//
// Cost: one core for at most LEAD_MS + TAIL_MS per standby; the lookahead passes at most one
// due instant a second: at most 0.7% of a core. An execution request ends the standby early.
// A new instant replaces the one armed.

import { MAX_TIMER_MS } from '../lib/clock.ts';

const NS_PER_MS = 1_000_000n;

/** How long before the due instant the child is awake (setTimeout's granularity is 1 ms). */
export const LEAD_MS = 2;
/** How long after it the child stays awake if no request has come. */
export const TAIL_MS = 5;

export interface StandbyEnd {
  /** The due instant it was armed for, wall clock, epoch ns. */
  readonly dueNs: bigint;
  /** How long the event loop was kept turning, ms. */
  readonly awakeMs: number;
  /** 'request': an execution request ended it; 'tail': none came within TAIL_MS of the instant. */
  readonly ended: 'request' | 'tail';
}

export class Standby {
  private readonly nowNs: () => bigint;
  private readonly onEnd: (end: StandbyEnd) => void;
  private timer: NodeJS.Timeout | null = null;
  private turn: NodeJS.Immediate | null = null;
  private dueNs = 0n;
  private untilNs = 0n;
  private wokeNs = 0n;

  /** `nowNs`: the wall clock the due instants are on (epoch ns). */
  constructor(nowNs: () => bigint, onEnd: (end: StandbyEnd) => void = () => {}) {
    this.nowNs = nowNs;
    this.onEnd = onEnd;
  }

  /** Whether the event loop is being kept turning now. */
  get awake(): boolean {
    return this.turn !== null;
  }

  /** Be awake from LEAD_MS before `dueNs` until a request arrives or TAIL_MS after it. */
  at(dueNs: bigint): void {
    this.stop();
    this.dueNs = dueNs;
    this.untilNs = dueNs + BigInt(TAIL_MS) * NS_PER_MS;
    const waitMs = Number((dueNs - this.nowNs()) / NS_PER_MS) - LEAD_MS;
    if (waitMs <= 0) this.wake();
    else this.timer = setTimeout(this.wake, Math.min(waitMs, MAX_TIMER_MS));
  }

  /** A request arrived: an ongoing standby has done its job (one still ahead stays armed). */
  arrived(): void {
    if (this.turn === null) return;
    clearImmediate(this.turn);
    this.end('request');
  }

  /** Disarms it, silently. */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.turn !== null) clearImmediate(this.turn);
    this.turn = null;
  }

  private readonly wake = (): void => {
    this.timer = null;
    this.wokeNs = this.nowNs();
    this.spin();
  };

  private readonly spin = (): void => {
    if (this.nowNs() < this.untilNs) this.turn = setImmediate(this.spin);
    else this.end('tail');
  };

  private end(ended: StandbyEnd['ended']): void {
    this.turn = null;
    this.onEnd({ dueNs: this.dueNs, awakeMs: Number(this.nowNs() - this.wokeNs) / 1e6, ended });
  }
}
