// The primary's one start/stop state machine (tickd(8) SIGNALS):
//
//   starting ──ready()──► ready
//      │                    │ SIGTERM / SIGINT
//      ├──SIGTERM/SIGINT────┴──► stopping ──► "stopped", exit 0 (or "unclean stop", exit 1)
//      └──startup error──► failed ──► workers killed, log closed; main.ts prints the one line, exit 1
//   stopping / failed ──another SIGTERM/SIGINT──► exit 1 at once
//
// Invariants:
// - The constructor installs the signal handlers, and the primary builds it before anything a
//   stop must undo exists (before the replay, before any worker is forked): from then on a
//   SIGTERM/SIGINT is a graceful stop whatever the phase, never a death by signal. SIGHUP is
//   ignored in every phase (there is no reload).
// - The startup is one async function run by start(). After each of its awaits it checks
//   stopRequested and, if set, returns at once, so nothing is created once a stop was
//   requested; the tick loop, compaction and re-dispatch start only in the synchronous step
//   that calls ready(), so they never start after a stop request.
// - A stop runs the ordered stop (shutdown.ts) once, over the parts own() was given. During
//   start-up it first waits for the startup step in progress to end (a replay, a worker
//   binding), so every part that exists is known to it; workers already forked are told to
//   drain at once, so that one still starting cannot hold the stop up.
// - Commands are answered from the moment the first worker listens, before `ready`: the
//   engine and journal exist before any worker is forked, and a stop drains the workers, so
//   every command answered before `ready` is one a graceful stop answers too.
// - ready() is announced (tickd(8) "Readiness and health"): the workers answer GET /ready 200
//   from then on (Supervisor.announce), and a service manager listening on NOTIFY_SOCKET is
//   sent READY=1 (service-notify.ts). A stop takes it back at once, before its first step
//   (in cluster mode a leader's hand-over, while the workers still serve): GET /ready 503.
import type { Logger } from '../lib/log.ts';
import { abandonParts, removePidfile, stopParts, type StopParts } from './shutdown.ts';
import { notifyReady, takeNotifySocket } from './service-notify.ts';
import { WORKER_EXIT_GRACE_MS } from './ipc/timing.ts';

export type Phase = 'starting' | 'ready' | 'stopping' | 'failed';

export class Lifecycle {
  #phase: Phase = 'starting';
  readonly #log: Logger;
  readonly #parts: StopParts = {};
  #startup: Promise<void> = Promise.resolve();
  /** Taken from the environment here, before any child process exists to inherit it. */
  readonly #notifySocket: string | null = takeNotifySocket(process.env);

  constructor(log: Logger) {
    this.#log = log;
    process.on('SIGTERM', this.#onSignal);
    process.on('SIGINT', this.#onSignal);
    // A hang-up from a closing terminal or a habitual `kill -HUP` must not take the daemon
    // down without its graceful stop.
    process.on('SIGHUP', () => log.warn('SIGHUP ignored: configuration is read at start; restart to apply changes'));
  }

  get phase(): Phase {
    return this.#phase;
  }

  /** The startup's checkpoint, read after every await: true means return now. */
  get stopRequested(): boolean {
    return this.#phase === 'stopping';
  }

  /** Every stop from now on includes these parts. */
  own(parts: StopParts): void {
    Object.assign(this.#parts, parts);
  }

  /**
   * Runs the startup. A startup error (not preceded by a stop request) kills the workers,
   * closes the log and is rethrown for main.ts to print. After a stop request the stop owns
   * the outcome: the error is logged and the stop goes on.
   */
  async start(startup: () => Promise<void>): Promise<void> {
    this.#startup = startup();
    try {
      await this.#startup;
    } catch (err) {
      if (this.#phase === 'stopping') {
        this.#log.warn({ why: (err as Error).message }, 'start-up cut short by the stop');
        return;
      }
      this.#phase = 'failed';
      await abandonParts(this.#parts);
      throw err;
    }
  }

  /** Called by the startup's last, synchronous step, only when no stop was requested. */
  ready(): void {
    if (this.#phase !== 'starting') throw new Error(`ready() while ${this.#phase}`);
    this.#phase = 'ready';
    this.#parts.supervisor?.announce('ready');
    if (this.#notifySocket !== null) notifyReady(this.#notifySocket, this.#log);
  }

  readonly #onSignal = (signal: NodeJS.Signals): void => {
    if (this.#phase === 'stopping' || this.#phase === 'failed') {
      this.#log.warn({ signal }, 'second signal: exiting now');
      removePidfile(this.#parts);
      process.exit(1);
    }
    const phase = this.#phase;
    this.#phase = 'stopping';
    // Before the log line: whoever reads "stopping" there finds GET /ready answering 503.
    this.#parts.supervisor?.announce('stopping');
    this.#log.info({ signal, phase }, 'stopping');
    if (phase === 'starting') void this.#parts.supervisor?.drain(WORKER_EXIT_GRACE_MS);
    // start() handles a rejected startup; here it only marks that every part is known.
    this.#startup.catch(() => {}).then(() => stopParts(this.#parts)).then(
      () => {
        this.#log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        this.#log.error({ err }, 'unclean stop');
        process.exit(1);
      },
    );
  };
}
