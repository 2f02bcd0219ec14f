// Row: cluster mode (tickd(8) CLUSTER MODE) beside the single-node logfile, in one run.
// 1. Durable SET/s, 64 closed-loop connections for 5 s after 1 s of warm-up: once against a
//    3-server NATS cluster on this machine with the stream at 3 replicas (an OK means a
//    majority of servers stored the record), once in logfile mode with fsync (an OK means it
//    is on disk); the ratio beside them.
// 2. Replay of 1 000 000 records: a logfile built through a daemon, then imported into the
//    stream (`tickd import`); a daemon started on each: "starting" -> "state loaded".
// The NATS servers are the bench's own (free ports, temp store dirs), never the one at 4222.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { natsServerPath, startNats, type NatsCluster } from '../../test/helpers/nats.ts';
import { TICKD } from '../../test/helpers/daemon.ts';
import { benchDir, startDaemon, stopDaemon } from '../lib/harness.ts';
import { closedLoop } from './durable.ts';
import { buildLogfile, LOGFILE, logTimeMs } from '../lib/logfile-load.ts';
import type { Figure, Row } from '../lib/suite.ts';

const CONNECTIONS = 64;
const JOBS = 1_000_000;

const clusterArgs = (nats: NatsCluster, name: string): string[] =>
  ['--cluster', nats.urls, '--cluster-name', name, '--cluster-replicas', String(nats.servers.length)];

function run(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [TICKD, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (c) => { err += c; });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tickd ${args[0]} exited ${code}: ${err}`))));
  });
}

/** "starting" -> "state loaded" of a daemon started with `args` in `dir`, in seconds. */
async function replaySeconds(dir: string, args: string[], persistence: 'logfile' | 'memory'): Promise<number> {
  const daemon = await startDaemon(dir, { workers: 1, args, config: { database: { persistence, compression_interval: 0 } } });
  try {
    const starting = await daemon.waitForLog((r) => r['msg'] === 'starting');
    const loaded = await daemon.waitForLog((r) => r['msg'] === 'state loaded');
    if (loaded['jobs'] !== JOBS) throw new Error(`replay loaded ${String(loaded['jobs'])} jobs, expected ${JOBS}`);
    return (logTimeMs(loaded) - logTimeMs(starting)) / 1000;
  } finally {
    await stopDaemon(daemon);
  }
}

export const row: Row = {
  name: 'cluster',
  title: 'cluster mode on a 3-server NATS R3 stream beside the logfile: durable SET/s, replay of 1M records',
  async run(opts) {
    const bin = natsServerPath();
    if (bin === null) return [{ label: 'cluster mode', value: null, unit: '', note: 'nats-server is missing' }];
    const nats = await startNats(bin, 3);
    try {
      const stream = (await closedLoop('cluster-durable', 'memory', 1, clusterArgs(nats, 'bench1'))).perSecond;
      opts.progress(`  R3 stream: ${stream.toFixed(0)} SET/s`);
      const logfile = (await closedLoop('cluster-logfile', 'logfile', 1)).perSecond;
      opts.progress(`  logfile + fsync: ${logfile.toFixed(0)} SET/s`);
      const dir = benchDir('cluster-replay');
      let fromLog: number;
      let fromStream: number;
      try {
        await buildLogfile(dir.path, JOBS, 1, opts.progress);
        fromLog = await replaySeconds(dir.path, [], 'logfile');
        await run(['import', join(dir.path, LOGFILE), ...clusterArgs(nats, 'bench2')]);
        fromStream = await replaySeconds(dir.path, clusterArgs(nats, 'bench2'), 'memory');
      } finally {
        dir.remove();
      }
      opts.progress(`  replay: logfile ${fromLog.toFixed(2)} s, stream ${fromStream.toFixed(2)} s`);
      const figures: Figure[] = [
        { label: `durable SET/s, 3-server NATS cluster, R3 stream, ${CONNECTIONS} closed-loop conn`, value: stream, unit: 'SET/s',
          note: `the same load on the logfile with fsync, same run: ${logfile.toFixed(0)} SET/s; ratio stream/logfile ${(stream / logfile).toFixed(2)}` },
        { label: '  same load, logfile + fsync (same run)', value: logfile, unit: 'SET/s' },
        { label: `replay ${JOBS.toLocaleString('en')} records from the R3 stream ("starting" -> "state loaded")`, value: fromStream, unit: 's', digits: 2,
          target: { op: '<=', value: 3 * fromLog }, note: `target: 3x the logfile replay of the same state in the same run (${fromLog.toFixed(2)} s)` },
        { label: `  replay of the same ${JOBS.toLocaleString('en')} records from the logfile`, value: fromLog, unit: 's', digits: 2 },
      ];
      return figures;
    } finally {
      await nats.stop();
    }
  },
};
