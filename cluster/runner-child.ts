// Runner child role (forked by cluster/runner-link.ts; messages in cluster/ipc/runner-messages.ts):
// the spec's "processor". It runs the execution requests of its primary with the runner pool
// and the runners of lib/runner/ (process spawns, HTTP, AMQP and Redis connections all live
// here), and answers each with its execution response. Starts and responses leave in one
// 'progress' message per event-loop turn (cluster/ipc/progress-outbox.ts).
//
// Why a process of its own: the runners' garbage (HTTP requests, amqplib, node-redis), their spawns (a
// fork from this small heap, not the primary's) and a library that crashes or leaks stay out
// of the scheduler's process; the primary fails the attempts such a crash cuts short and forks
// a new child (tickd(8) "Runner processes").
//
// Invariants:
// - SIGINT and SIGTERM are ignored (a Ctrl-C reaches the whole process group): only the
//   primary's 'stop' ends the executions, so that a stop leaves their jobs `triggered`.
// - A closed channel (the primary died) aborts every execution (killing the process groups it
//   started) and ends this process: no runner outlives its scheduler unobserved.
// - After 'stop' nothing new starts; 'stopped' is the last message.
import { createLogger, type Logger } from '../lib/log.ts';
import { RunnerPool, type RunReport } from '../lib/runner/pool.ts';
import type { Execution, RunnerContext } from '../lib/runner/execution.ts';
import { preloadRunners } from '../lib/runner/preload.ts';
import { prepareRunner } from '../lib/runner/run-by-kind.ts';
import { wallNowNs } from '../lib/clock.ts';
import type { ExecutionResponse, FromRunnerChild, RunnerInit, ToRunnerChild } from './ipc/runner-messages.ts';
import { ProgressOutbox } from './ipc/progress-outbox.ts';
import { Standby } from './runner-standby.ts';
import { requestShortSlice } from './short-slice.ts';
import { keepCompileCacheFromJobs, saveCompileCache } from './compile-cache.ts';
import { keepMallocTunablesFromJobs } from './malloc-tunables.ts';

let pool: RunnerPool | null = null;
let log: Logger | null = null;
let ctx: RunnerContext | null = null;
const abandoned: ExecutionResponse[] = [];

function send(msg: FromRunnerChild, then?: () => void): void {
  // A failed send means the primary is gone, and 'disconnect' ends this process.
  process.send?.(msg, undefined, undefined, () => then?.());
}

const outbox = new ProgressOutbox((msg) => send(msg));

const standby = new Standby(wallNowNs, (end) => {
  log?.debug({ due: end.dueNs.toString(), awake_ms: Math.round(end.awakeMs * 1000) / 1000, ended: end.ended }, 'runner standby');
});

function response(exec: Execution, success: boolean, r: RunReport): ExecutionResponse {
  return { attempt: exec.attempt, success, startedNs: r.startedNs, durationNs: r.durationNs, outcome: r.outcome };
}

function start(init: RunnerInit): void {
  keepCompileCacheFromJobs(); // before any runner starts a process
  keepMallocTunablesFromJobs();
  log = createLogger(init.logLevel, 'runner', init.logFormat);
  const runnerCtx: RunnerContext = { shellPath: init.shellPath, shellArgs: [...init.shellArgs], timeoutMs: init.timeoutMs, log: log.child({ component: 'runner' }) };
  ctx = runnerCtx;
  // The same short slice as the tick thread (cluster/short-slice.ts): every execution's start
  // waits for this thread to wake, and on a busy machine a woken thread with the default slice
  // waits for the running one's slice to end. From the primary's send to this thread taking
  // the first request of a burst: 0.3-3.7 ms before, 0.25-1.1 ms in 11 runs of 12 with it.
  // Asked for while the heap is small: the helper's spawn forks this process.
  if (init.sliceUs > 0) {
    const l = log;
    void requestShortSlice(process.pid, init.sliceUs).then((s) => {
      if (s.applied) l.info({ sliceUs: s.sliceUs }, 'runner process: short scheduler slice');
      else l.info({ why: s.why }, 'runner process: default scheduler slice');
    });
  }
  pool = new RunnerPool({
    maxInflight: init.maxInflight,
    ctx: runnerCtx,
    onStart: (exec, startedNs) => outbox.started(exec.attempt, startedNs),
    onResult: (exec, success, _ms, report) => outbox.response(response(exec, success, report)),
    onAbandoned: (exec, report) => abandoned.push(response(exec, false, report)),
  });
  // After this turn, so that the child takes work (and a stop) before the modules load.
  setImmediate(() => preloadRunners(runnerCtx, init.kinds, saveCompileCache));
}

async function stop(graceMs: number): Promise<void> {
  standby.stop();
  await pool?.stop(graceMs);
  outbox.flush(); // what finished within the grace period, before 'stopped'
  send({ t: 'stopped', abandoned }, () => process.exit(0));
}

process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
process.on('disconnect', () => {
  standby.stop();
  // Aborting kills the process groups the runners started; then nothing is left to wait for.
  void (pool?.stop(0) ?? Promise.resolve()).finally(() => process.exit(0));
});
process.on('message', (msg: ToRunnerChild) => {
  switch (msg.t) {
    case 'init':
      start(msg.init);
      return;
    case 'execute':
      standby.arrived();
      for (const req of msg.requests) pool!.submit(req);
      return;
    case 'prepare':
      if (ctx !== null) prepareRunner(msg.runner, ctx);
      if (msg.awakeNs !== null) standby.at(msg.awakeNs);
      return;
    case 'load':
      if (ctx !== null) preloadRunners(ctx, msg.kinds, saveCompileCache);
      return;
    case 'stop':
      void stop(msg.graceMs);
      return;
    default: {
      const never: never = msg;
      log?.warn({ msg: never }, 'unknown message from the primary');
    }
  }
});
