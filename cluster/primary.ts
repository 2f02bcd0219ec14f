// Primary role: the one owner of the store, the logfile, the tick loop and the runner child
// processes (runner-processes.ts: executions run there, never here). This
// file is the composition root: it builds the parts in order and wires them; what each part
// does lives in its own module (start-up inputs in lib/config/inputs.ts, start and stop in
// lifecycle.ts, the workers and their messages in supervisor.ts).
// Startup order: config -> token file -> TLS material -> signal handlers (cluster/lifecycle.ts)
// -> "starting" -> telemetry (and the instruments GET /metrics reads) -> replay the logfile
// -> the runner child processes forked if some rule has a runner (else at the first rule)
// -> engine -> workers listening (commands are answered from here on) -> then, in one
// synchronous step: pidfile -> re-dispatch of the jobs left `triggered` on disk -> tick loop
// -> compaction -> "ready".
// Invariants:
// - Any failure before "ready" is a startup error: one stderr line, exit 1, no worker left
//   behind. A SIGTERM/SIGINT at any point after the handlers is a graceful stop, exit 0.
// - The re-dispatch runs before the first tick: a job left `triggered` on disk runs exactly
//   once more, and a job that came due while the daemon was down (still `planned`) is fired
//   by the first tick exactly once, never re-dispatched as well.
// - Cluster mode (lib/leadership/node.ts): "ready" means a follower that serves its clients
//   by forwarding to the leader; the node competes for the lease from then on, and only
//   while it leads do batches run here, the tick fire, and the re-dispatch run (at each
//   promotion). Stepping down makes the engine forget its attempts and pending results.
import { writeFileSync } from 'node:fs';
import type { CliAction } from '../lib/cli.ts';
import { loadStartupInputs, type StartupInputs } from '../lib/config/inputs.ts';
import { StartupError } from '../lib/errors.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { LastAttempts, MAX_ATTEMPT_RECORDS } from '../lib/store/attempts.ts';
import { Engine } from '../lib/engine/engine.ts';
import { NotWritingError } from '../lib/engine/journal.ts';
import { combineObservers, engineObserver, failureLog, firingLog } from '../lib/engine/observers.ts';
import { ActivityRing } from '../lib/engine/activity.ts';
import { answerAside } from '../lib/engine/answer-aside.ts';
import { activityObserver, poolHooks } from '../lib/engine/executions.ts';
import type { Command, Reply } from '../lib/domain/command.ts';
import { fail } from '../lib/errors.ts';
import { buildStat, type StatSources } from '../lib/engine/stats.ts';
import { warmUpFiring } from '../lib/engine/warm-up.ts';
import { openStorage } from '../lib/persistence/open.ts';
import { JobStore } from '../lib/store/jobs.ts';
import { RuleStore } from '../lib/store/rules.ts';
import { ScheduleStore } from '../lib/store/schedules.ts';
import { runnerTimeoutMs } from '../lib/runner/execution.ts';
import { ExecutionResults } from '../lib/engine/results.ts';
import { Ticker } from '../lib/engine/tick.ts';
import { requestShortSlice, type SliceOutcome } from './short-slice.ts';
import { wallNowNs, wallOfHr } from '../lib/clock.ts';
import { VERSION } from '../lib/version.ts';
import type { JobInstruments } from '../lib/telemetry/instruments.ts';
import { loadPrimaryMeters, loadTelemetry, type PrimaryMeters } from '../lib/telemetry/wiring.ts';
import { ConnectionCounts } from './connection-counts.ts';
import { FoldProcess } from './fold-process.ts';
import { RunnerProcesses } from './runner-processes.ts';
import { Supervisor } from './supervisor.ts';
import { Lifecycle } from './lifecycle.ts';
import { saveCompileCache } from './compile-cache.ts';
import type { EngineSide, Placement } from '../lib/placement/placement.ts';
import type { ClusterNode } from '../lib/leadership/node.ts';

export type RunAction = Extract<CliAction, { mode: 'run' }>;

export async function runPrimary(action: RunAction): Promise<void> {
  const startedNs = process.hrtime.bigint();
  const inputs = loadStartupInputs(action.config);
  const log = createLogger(inputs.config.log.level, 'primary', action.logFormat);
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
  // GET /metrics reads these (the same MeterProvider as OTLP export, when that is on).
  const meters = await loadPrimaryMeters(config, log, telemetry, VERSION);
  if (life.stopRequested) return;

  // Made before the runners and the engine, so that neither needs the other to exist first.
  const results = new ExecutionResults();
  const activity = new ActivityRing();
  // The metrics exist only once the log is replayed; the hooks read them at each execution.
  // In cluster mode the results go to this node's executor, which sends each to the leader.
  const sinks: { results: Pick<ExecutionResults, 'push'>; activity: ActivityRing; instruments: JobInstruments | null } = { results, activity, instruments: null };
  // Forked once a rule needs them (RunnerProcesses.use, after the replay).
  const runners = new RunnerProcesses({
    count: action.runnerProcesses,
    maxInflight: action.maxInflight,
    init: { shellPath: config.shell.path, shellArgs: [...config.shell.args], timeoutMs: runnerTimeoutMs(), logLevel: config.log.level, logFormat: action.logFormat, sliceUs: action.tickSliceUs },
    log: log.child({ component: 'runner' }),
    ...poolHooks(sinks),
  });
  life.own({ pool: runners });
  warmUpFiring(); // before the state is loaded: its cost does not grow with the stores

  const jobs = new JobStore();
  const rules = new RuleStore();
  const schedules = new ScheduleStore();
  const folds = (): FoldProcess => new FoldProcess({ log: log.child({ component: 'logfile' }) });
  const storage = await openStorage({ config, cluster: action.cluster, jobs, rules, schedules, log, folds, stopped: () => life.stopRequested });
  life.own({ storage });
  log.info({ persistence: storage.kind, logfile: storage.path, jobs: jobs.size, rules: rules.size, schedules: schedules.size }, 'state loaded');
  if (life.stopRequested) return;
  runners.use(rules.kinds());
  rules.onKindsChanged = () => runners.use(rules.kinds());

  // Cluster mode: every node runs what the leader places on it (lib/placement/).
  const placement = storage.node === undefined ? null : await openPlacement(storage.node, action, inputs, runners, log);
  if (placement !== null) {
    sinks.results = placement.executor;
    life.own({ placement });
  }
  const connections = new ConnectionCounts();
  const instruments = meters?.instruments({
    connections: connections.total, rules: () => rules.size, compactions: storage.compactions,
    ...(storage.node === undefined ? {} : { role: () => storage.node!.role }),
    ...(placement === null ? {} : { placement: () => placement.counts() }),
  }) ?? null;
  sinks.instruments = instruments;
  const statSources: StatSources = {
    startedNs, jobs, rules,
    connections: connections.total,
    executions: () => ({ pending: runners.pending, inflight: runners.inflight }),
    persistence: storage.kind,
    compression: storage.compression,
    authEnabled: tokens !== null,
    tlsEnabled: tls !== null,
    framerate: config.database.framerate,
  };
  const failures = failureLog(log.child({ component: 'scheduler' }));
  life.own({ failures });
  // The tick loop is made after the engine; the lookahead (in the engine's tick) only runs once it is.
  let ticker: Ticker | null = null;
  const engine = new Engine({
    attempts: new LastAttempts(MAX_ATTEMPT_RECORDS, config.database.attempt_history),
    jobs,
    rules,
    schedules,
    // A schedule's records need format 3: in a cluster, only once every node reads it.
    ...(storage.node === undefined ? {} : { formatRefused: (needs: number) => storage.node!.refusesFormat(needs) }),
    ...(placement === null ? {} : { waitingForNode: (id: string) => placement.waitingFor(id) }),
    journal: storage.journal,
    results,
    activity: () => activity.snapshot(Date.now()),
    dispatch: (job, rule, attempt, run) => {
      const exec = run.attemptNo === 1 && run.heldNs === 0n && run.dueNs === job.execution
        ? { attempt, jobId: job.id, execution: job.execution, runner: rule.runner, rule: rule.id }
        : { attempt, jobId: job.id, execution: job.execution, runner: rule.runner, rule: rule.id, attemptNo: run.attemptNo, dueNs: run.dueNs, heldNs: run.heldNs };
      if (placement === null) runners.submit(exec);
      else placement.dispatch(exec, rule.options?.on);
    },
    prepare: (runner, awakeNs) => {
      runners.prepare(runner, awakeNs);
      if (awakeNs !== null) ticker?.awakeFor(awakeNs);
    },
    stat: () => buildStat(statSources),
    onPersistError: (err) => log.error({ err }, 'persisting failed; unacknowledged changes rolled back'),
    // A journal that takes no writes (not the leader) said so once; its refusals are expected.
    onCommandError: (err) => { if (!(err instanceof NotWritingError)) log.error({ err }, 'a command or tick failed; a command is answered ERROR internal'); },
    observer: combineObservers([
      instruments === null ? null : engineObserver(instruments),
      activityObserver(activity),
      failures,
      log.debug() ? firingLog(log.child({ component: 'scheduler' })) : null,
    ]),
  });
  life.own({ engine });

  // Cluster mode: a follower forwards its clients' batches to the leader (lib/leadership).
  // GET /metrics is this node's own, answered here whatever the node's role.
  const node = storage.node;
  const toEngine = node === undefined
    ? (cmds: readonly Command[], done: (replies: Reply[]) => void) => engine.submitBatch(cmds, done)
    : (cmds: readonly Command[], done: (replies: Reply[]) => void) => node.submit(cmds, done);
  const metricsReply = metricsAnswer(meters);
  const supervisor = new Supervisor({
    count: action.workers,
    init: { config, tokens, tls, version: VERSION, logFormat: action.logFormat, cluster: action.cluster !== null },
    log,
    onBatch: (cmds, done) => answerAside(cmds, (c) => c.op === 'metrics', metricsReply, toEngine, done),
    onConnections: (workerId, count) => connections.set(workerId, count),
    onExit: (workerId) => connections.delete(workerId),
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
  const redispatch = (): void => {
    const n = engine.redispatchTriggered();
    if (n > 0) log.info({ jobs: n }, 'jobs left triggered are dispatched again');
  };
  // Cluster mode: only the leader fires, and only while its writes go through (one being
  // retried holds the tick: what comes due meanwhile fires, late, once writes go through).
  const onTurn = instruments === null ? undefined : (ns: bigint): void => instruments.tickTurn(Number(ns) / 1e6);
  ticker = new Ticker(config.database.framerate, node === undefined
    ? () => engine.tick(wallNowNs())
    : () => node.firing && engine.tick(wallNowNs()), wallOfHr, onTurn);
  life.own({ ticker });
  if (node === undefined || placement === null) {
    redispatch();
  } else {
    placement.start(placementEngine(engine, activity, sinks, redispatch, node.links.opts.nodeName));
    node.placementView = () => placement.view();
    node.start({
      local: (cmds, done) => engine.submitBatch(cmds, done),
      // The census first (placement.ts): what the nodes still run is adopted, not run again.
      promoted: () => { instruments?.tookOver(); engine.armSchedules(); placement.promoted(); },
      quarantined: () => instruments?.quarantined(),
      steppingDown: () => placement.demoted(),
      demoted: () => engine.forget(),
    });
  }
  ticker.start();
  storage.startCompaction();
  log.info({ tcp: addresses.tcp, http: addresses.http, tls: tls !== null, auth: tokens !== null, workers: action.workers, persistence: storage.kind }, 'ready');
  saveCompileCache();
}

/** A cluster node's execution placement: its tags from --node-tags, else the config file's. */
async function openPlacement(node: ClusterNode, action: RunAction, inputs: StartupInputs, runners: RunnerProcesses, log: Logger): Promise<Placement> {
  // Loaded in cluster mode only, as NATS is (test/unit/architecture.test.ts).
  const { Placement } = await import('../lib/placement/placement.ts');
  const opts = node.links.opts;
  const tags = opts.nodeTags ?? inputs.config.cluster.node_tags; // checked by the config's loader
  const plog = log.child({ component: 'placement' });
  plog.info({ node: opts.nodeName, tags, capacity: action.maxInflight }, 'this node runs what the leader places on it');
  return new Placement({
    nc: node.links.nc, keys: node.links.keys, cluster: opts.name, log: plog, node: opts.nodeName, members: node.links.members,
    tags, capacity: action.maxInflight, waitMs: inputs.config.cluster.placement_wait * 1000,
    submit: (exec) => runners.submit(exec), wallNs: wallNowNs, mayTake: () => node.firing,
  });
}

/**
 * What placement needs of the leader's engine. GET /activity is the leader's: another node's
 * execution is counted in its window when its result comes (this node's own, by the runner
 * hooks, as on a single node); a no_node failure as a finished execution.
 */
function placementEngine(engine: Engine, activity: ActivityRing, sinks: { instruments: JobInstruments | null }, redispatch: () => void, self: string): EngineSide {
  return {
    result: (r, durable) => {
      if (r.record.node !== self) {
        activity.recordLateness(Number(r.record.startedNs) / 1e6, Number(r.record.latenessNs) / 1e6);
        activity.recordFinished(Date.now(), r.success);
      }
      engine.result(r.jobId, r.attempt, r.success, r.record, durable);
    },
    adopt: (h) => engine.adopt(h.jobId, h.attempt, h.execution, h.attemptNo),
    rerun: (jobId, attempt) => void engine.rerun(jobId, attempt),
    noNode: (exec, record) => {
      sinks.instruments?.outcome(exec.runner.type, record.outcome.kind, false);
      activity.recordFinished(Date.now(), false);
      engine.result(exec.jobId, exec.attempt, false, record);
    },
    redispatch,
  };
}

/** GET /metrics's answer: this process's metrics in the Prometheus text format. */
function metricsAnswer(meters: PrimaryMeters | null): () => Promise<Reply> {
  const scrape = meters?.scrape ?? null;
  if (scrape === null) return () => Promise.resolve(fail('not_found', 'metrics are not served without the HTTP interface'));
  return async () => ({ ok: true, kind: 'metrics', text: await scrape() });
}
