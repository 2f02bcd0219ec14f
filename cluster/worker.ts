// Connection worker role (forked by cluster/supervisor.ts). Accepts TCP (terminating TLS) and
// HTTP, turns lines and requests into Commands and forwards them to the primary in per-turn
// batches. Holds no scheduler state: everything it answers comes from the primary.
// Invariants:
// - A worker whose primary is gone exits 0 quietly: a failed send is ignored (its callback
//   gets the error; 'disconnect' follows and ends the worker), never an unhandled 'error'.
// - 'drain' may come while the worker is still starting (a stop during the daemon's start-up):
//   the start is finished first, so the primary hears 'listening' (or 'listen-failed') and
//   every connection accepted is answered before the exit.
// - GET /ready answers from `readiness`: 'starting' until the primary says otherwise; once
//   'stopping' (told so, or told to drain), never anything else.
import cluster from 'node:cluster';
import { buildTokenTable } from '../lib/auth/verify.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { formatAddress } from '../lib/config/listen.ts';
import { TcpListener } from '../lib/net/tcp.ts';
import { loadTelemetry, requestHook, TELEMETRY_FLUSH_MS, type Telemetry } from '../lib/telemetry/wiring.ts';
import { encodeBatch } from './ipc/batch-codec.ts';
import { PrimaryLink, TurnBatcher } from './ipc/channel.ts';
import type { ToPrimary, ToWorker, WorkerInit } from './ipc/messages.ts';
import { WORKER_DRAIN_MS } from './ipc/timing.ts';
import { saveCompileCache } from './compile-cache.ts';
import { startHttp, type HttpHandle, type Readiness } from './worker-http.ts';


function send(msg: ToPrimary): void {
  process.send!(msg, ignoreSendError);
}

function ignoreSendError(_err: Error | null): void {}

const link = new PrimaryLink((seqs, cmds) => send({ t: 'batch', ...encodeBatch(seqs, cmds) }));
let tcp: TcpListener | null = null;
let http: HttpHandle | null = null;
let log: Logger | null = null;
let telemetry: Telemetry | null = null;
let readiness: Readiness = 'starting';

// Connection counts change on every accept/close; report at most once per turn.
const connections = new TurnBatcher<number, null>((counts) => send({ t: 'connections', count: counts[counts.length - 1]! }));

/** Settles once the start has ended, listening or not. */
let started: Promise<void> = Promise.resolve();

process.on('message', (msg: ToWorker) => {
  switch (msg.t) {
    case 'init':
      started = start(msg.init).catch((err: Error) => {
        send({ t: 'listen-failed', message: err.message });
      });
      return;
    case 'replies':
      link.deliver(msg.seqs, msg.replies);
      return;
    case 'readiness':
      if (readiness !== 'stopping') readiness = msg.readiness;
      return;
    case 'drain':
      readiness = 'stopping';
      void drain();
      return;
    default: {
      const never: never = msg;
      throw new Error(`unknown message ${JSON.stringify(never)}`);
    }
  }
});

// The primary is gone: nothing can be answered any more.
process.on('disconnect', () => process.exit(0));
// node:cluster's own messages (e.g. the request for the listening handle) are sent without a
// callback; one that fails because the primary vanished is re-emitted as 'error' on
// cluster.worker, which throws without a listener. 'disconnect' ends the worker.
(cluster.worker ?? process).on('error', () => {});
// Signals are the primary's business; a worker only stops when told to drain.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

async function start(init: WorkerInit): Promise<void> {
  const { config } = init;
  log = createLogger(config.log.level, 'worker', init.logFormat);
  telemetry = await loadTelemetry(config, log, 'worker', init.version);
  const tokens = init.tokens === null ? null : buildTokenTable(init.tokens);
  const dispatch = link.request.bind(link);
  tcp = new TcpListener({
    tls: init.tls,
    tokens,
    dispatch,
    log,
    onConnectionCount: (count) => connections.push(count, null),
    onRequest: requestHook(log, telemetry),
  });
  const tcpAddr = await tcp.listen(config.controller.listen.host, config.controller.listen.port)
    .catch((err: NodeJS.ErrnoException) => { throw new Error(`cannot listen on ${config.controller.listen.text}: ${err.code ?? err.message}`); });
  let httpAddr: string | null = null;
  if (config.http.listen !== null) {
    const { host, port, text } = config.http.listen;
    http = await startHttp({
      host, port, tokens, dispatch: (cmd) => link.requestAsync(cmd), readiness: () => readiness, log, version: init.version, cluster: init.cluster,
    })
      .catch((err: NodeJS.ErrnoException) => { throw new Error(`cannot listen on ${text}: ${err.code ?? err.message}`); });
    httpAddr = formatAddress(http.host, http.port);
  }
  send({ t: 'listening', tcp: formatAddress(tcpAddr.host, tcpAddr.port), http: httpAddr });
  saveCompileCache();
}

async function drain(): Promise<void> {
  await started;
  await Promise.all([tcp?.drain(WORKER_DRAIN_MS), http?.close(WORKER_DRAIN_MS)]);
  await telemetry?.shutdown(TELEMETRY_FLUSH_MS.worker);
  process.exit(0);
}
