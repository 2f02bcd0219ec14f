// Ordered stop on SIGTERM/SIGINT (decisions §2): drain the workers (stop accepting, answer
// what was received; HTTP gets 5 s) -> stop the tick -> stop the runners (executions still
// running stay `triggered` on disk and run again next start) -> flush and fsync the log ->
// flush telemetry (at most 2 s) -> remove the pidfile -> exit 0. A second signal forces exit at once.
import { rmSync } from 'node:fs';
import type { Logger } from '../lib/log.ts';
import type { Storage } from '../lib/engine/storage.ts';
import type { RunnerPool } from '../lib/runner/pool.ts';
import type { Ticker } from '../lib/scheduler/tick.ts';
import type { Supervisor } from './supervisor.ts';
import { TELEMETRY_FLUSH_MS, type Telemetry } from '../lib/telemetry/wiring.ts';

const WORKER_GRACE_MS = 6000;
const RUNNER_GRACE_MS = 0;

export interface ShutdownParts {
  readonly log: Logger;
  readonly supervisor: Supervisor;
  readonly ticker: Ticker;
  readonly pool: RunnerPool;
  readonly storage: Storage;
  readonly pidfile: string | null;
  /** null when [telemetry] is disabled. */
  readonly telemetry?: Telemetry | null;
}

export function installShutdown(parts: ShutdownParts): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      parts.log.warn({ signal }, 'second signal: exiting now');
      removePidfile(parts.pidfile);
      process.exit(1);
    }
    stopping = true;
    parts.log.info({ signal }, 'stopping');
    stop(parts).then(
      () => { parts.log.info('stopped'); process.exit(0); },
      (err) => { parts.log.error({ err }, 'unclean stop'); process.exit(1); },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // There is no reload: a hang-up from a closing terminal or a habitual `kill -HUP` must not
  // take the daemon down without its graceful stop.
  process.on('SIGHUP', () => parts.log.warn('SIGHUP ignored: configuration is read at start; restart to apply changes'));
}

async function stop(parts: ShutdownParts): Promise<void> {
  await parts.supervisor.drain(WORKER_GRACE_MS);
  parts.ticker.stop();
  await parts.pool.stop(RUNNER_GRACE_MS);
  await parts.storage.close();
  // Last, so the final counts are in it; bounded, so a dead collector cannot hold the exit.
  await parts.telemetry?.shutdown(TELEMETRY_FLUSH_MS.primary);
  removePidfile(parts.pidfile);
}

function removePidfile(path: string | null): void {
  if (path !== null) rmSync(path, { force: true });
}
