// Primary role: the one owner of the store, the logfile, the tick loop and the runners.
// Startup order: config -> token file -> TLS material -> signal handlers (cluster/lifecycle.ts)
// -> "starting" -> telemetry -> replay the logfile -> engine -> workers listening (commands
// are answered from here on) -> then, in one synchronous step: pidfile -> re-dispatch of the
// jobs left `triggered` on disk -> tick loop -> compaction -> "ready".
// Invariants:
// - Any failure before "ready" is a startup error: one stderr line, exit 1, no worker left
//   behind. A SIGTERM/SIGINT at any point after the handlers is a graceful stop, exit 0.
// - The re-dispatch runs before the first tick: a job left `triggered` on disk runs exactly
//   once more, and a job that came due while the daemon was down (still `planned`) is fired
//   by the first tick exactly once, never re-dispatched as well.
import type { Worker } from 'node:cluster';
import { readFileSync, writeFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { CliAction } from '../lib/cli.ts';
import { loadConfigFile, parseConfig } from '../lib/config/load.ts';
import type { Config } from '../lib/config/schema.ts';
import { loadTokenFile, type TokenEntry } from '../lib/config/tokens.ts';
import { StartupError } from '../lib/errors.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { Engine } from '../lib/engine/engine.ts';
import { combineObservers, firingLog } from '../lib/engine/observers.ts';
import { buildStat, type StatSources } from '../lib/engine/stats.ts';
import { openStorage } from '../lib/persistence/storage.ts';
import { JobStore } from '../lib/store/jobs.ts';
import { RuleStore } from '../lib/store/rules.ts';
import { RunnerPool } from '../lib/runner/pool.ts';
import { runnerTimeoutMs } from '../lib/runner/execution.ts';
import { Ticker } from '../lib/scheduler/tick.ts';
import { requestShortSlice, type SliceOutcome } from './short-slice.ts';
import { wallNowNs } from '../lib/scheduler/clock.ts';
import { VERSION } from '../lib/version.ts';
import { engineObserver } from '../lib/telemetry/instruments.ts';
import { loadTelemetry } from '../lib/telemetry/wiring.ts';
import type { ToPrimary } from './ipc/messages.ts';
import { FoldProcess } from './fold-process.ts';
import { Supervisor } from './supervisor.ts';
import { Lifecycle } from './lifecycle.ts';

export type RunAction = Extract<CliAction, { mode: 'run' }>;

interface StartupInputs {
  readonly config: Config;
  readonly tokens: TokenEntry[] | null;
  readonly tls: { cert: string; key: string } | null;
}

/** Everything --check validates, without side effects. */
export function loadStartupInputs(configPath: string | null): StartupInputs {
  const config = configPath === null ? parseConfig('', null) : loadConfigFile(configPath);
  const tokens = config.controller.auth_file === null ? null : loadTokenFile(config.controller.auth_file);
  return { config, tokens, tls: loadTls(config) };
}

// The PEM pair is checked here, once, so that a bad pair is a startup error naming the files.
// createSecureContext alone is not enough: it silently accepts an EMPTY cert or key file (it
// skips falsy values), which would start a TLS port on which every handshake fails.
function loadTls(config: Config): { cert: string; key: string } | null {
  const { tls_cert, tls_key } = config.controller;
  if (tls_cert === null || tls_key === null) return null;
  const invalid = (message: string) => new StartupError('tls', 'InvalidValue', message);
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      throw invalid(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  };
  const cert = read(tls_cert, 'controller.tls_cert');
  const key = read(tls_key, 'controller.tls_key');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert); // the first certificate of the file: the server's own
  } catch (err) {
    throw invalid(`controller.tls_cert ${tls_cert} holds no PEM certificate: ${(err as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw invalid(`controller.tls_key ${tls_key} holds no usable PEM private key: ${(err as Error).message}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw invalid(`controller.tls_cert ${tls_cert} and controller.tls_key ${tls_key} do not form a usable pair: the key does not match the first certificate`);
  }
  try {
    createSecureContext({ cert, key, minVersion: 'TLSv1.2' });
  } catch (err) {
    throw invalid(`controller.tls_cert ${tls_cert} and controller.tls_key ${tls_key} do not form a usable pair: ${(err as Error).message}`);
  }
  return { cert, key };
}

export async function runPrimary(action: RunAction): Promise<void> {
  const startedNs = process.hrtime.bigint();
  const inputs = loadStartupInputs(action.config);
  const log = createLogger(inputs.config.log.level, 'primary');
  // Before anything a stop must undo exists: from here on a signal is a graceful stop.
  const life = new Lifecycle(log);
  log.info({ config: inputs.config.source ?? '(defaults)', version: VERSION, pid: process.pid }, 'starting');
  await life.start(() => startPrimary(action, inputs, log, life, startedNs));
}

// The startup steps. After every await: `if (life.stopRequested) return;` (lifecycle.ts).
async function startPrimary(action: RunAction, inputs: StartupInputs, log: Logger, life: Lifecycle, startedNs: bigint): Promise<void> {
  const { config, tokens, tls } = inputs;
  // The tick runs on this (main) thread. Asked for now: the helper's spawn forks this process,
  // which is cheap only while the heap is small.
  if (action.tickSliceUs > 0) void requestShortSlice(process.pid, action.tickSliceUs).then((s: SliceOutcome) => {
    if (s.applied) log.info({ sliceUs: s.sliceUs }, 'tick thread: short scheduler slice');
    else log.info({ why: s.why }, 'tick thread: default scheduler slice');
  });
  const telemetry = await loadTelemetry(config, log, 'primary', VERSION);
  life.own({ telemetry });
  if (life.stopRequested) return;

  const jobs = new JobStore();
  const rules = new RuleStore();
  const folds = new FoldProcess({ log: log.child({ component: 'logfile' }) });
  const storage = await openStorage(config, jobs, rules, log, folds);
  life.own({ storage });
  log.info({ persistence: config.database.persistence, logfile: storage.path, jobs: jobs.size, rules: rules.size }, 'state loaded');
  if (life.stopRequested) return;

  const connections = new Map<number, number>();
  const totalConnections = (): number => {
    let n = 0;
    for (const c of connections.values()) n += c;
    return n;
  };
  const instruments = telemetry?.instruments({ connections: totalConnections, rules: () => rules.size, compactions: storage.compactions }) ?? null;
  const pool = new RunnerPool({
    maxInflight: action.maxInflight,
    ctx: { shellPath: config.shell.path, shellArgs: [...config.shell.args], timeoutMs: runnerTimeoutMs(), log: log.child({ component: 'runner' }) },
    // Results only arrive once the engine below dispatches, so it is initialized by then.
    onResult: (exec, success, durationMs) => {
      instruments?.executed(success, durationMs);
      engine.result(exec.jobId, exec.attempt, success);
    },
  });
  life.own({ pool });
  const statSources: StatSources = {
    startedNs, jobs, rules,
    connections: totalConnections,
    executions: () => ({ pending: pool.pending, inflight: pool.inflight }),
    persistence: config.database.persistence,
    compression: storage.compression,
    authEnabled: tokens !== null,
    tlsEnabled: tls !== null,
    framerate: config.database.framerate,
  };
  const engine = new Engine({
    jobs,
    rules,
    journal: storage.journal,
    dispatch: (job, rule, attempt) => pool.submit({ attempt, jobId: job.id, execution: job.execution, runner: rule.runner }),
    stat: () => buildStat(statSources),
    onPersistError: (err) => log.error({ err }, 'persisting failed; unacknowledged changes rolled back'),
    onCommandError: (err) => log.error({ err }, 'command failed; answered ERROR internal'),
    observer: combineObservers([
      instruments === null ? null : engineObserver(instruments),
      log.debug() ? firingLog(log.child({ component: 'scheduler' })) : null,
    ]),
  });

  const supervisor = new Supervisor({
    count: action.workers,
    init: { config, tokens, tls, version: VERSION },
    log,
    onMessage: (worker: Worker, msg: ToPrimary) => {
      switch (msg.t) {
        case 'batch':
          engine.submitBatch(msg.cmds, (replies) => supervisor.reply(worker, msg.seqs, replies));
          return;
        case 'connections':
          connections.set(worker.id, msg.count);
          return;
        case 'listening':
        case 'listen-failed':
          return; // handled by the supervisor during startup
        default: {
          const never: never = msg;
          log.warn({ msg: never }, 'unknown message from worker');
        }
      }
    },
    onExit: (worker) => connections.delete(worker.id),
  });
  life.own({ supervisor });
  let addresses;
  try {
    addresses = await supervisor.start();
  } catch (err) {
    throw new StartupError('listen', 'ListenError', (err as Error).message);
  }
  if (life.stopRequested) return;

  // Ready, in one synchronous step. The pidfile first: writing it is the last thing that may
  // fail, and then nothing else has started. The re-dispatch before the tick: it must see only
  // the jobs replayed as `triggered`, not the overdue ones the first tick is about to fire.
  if (action.pidfile !== null) {
    writeFileSync(action.pidfile, `${process.pid}\n`);
    life.own({ pidfile: action.pidfile });
  }
  life.ready();
  const redispatched = engine.redispatchTriggered();
  if (redispatched > 0) log.info({ jobs: redispatched }, 'jobs left triggered are dispatched again');
  const ticker = new Ticker(config.database.framerate, () => engine.tick(wallNowNs()));
  life.own({ ticker });
  ticker.start();
  storage.startCompaction();
  log.info({ tcp: addresses.tcp, http: addresses.http, tls: tls !== null, auth: tokens !== null, workers: action.workers, persistence: config.database.persistence }, 'ready');
}
