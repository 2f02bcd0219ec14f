// Row: cluster mode (tickd(8) CLUSTER MODE) beside the single-node logfile, in one run.
// 1. Durable SET/s, 64 closed-loop connections for 5 s after 1 s of warm-up: once against a
//    3-server NATS cluster on this machine with the stream at 3 replicas (an OK means a
//    majority of servers stored the record), once in logfile mode with fsync (an OK means it
//    is on disk); the ratio beside them.
// 2. Replay of 1 000 000 records: a logfile built through a daemon, then imported into the
//    stream (`tickd import`); a daemon started on each: "starting" -> "state loaded". Beside
//    the times, the CPU each used (the daemon's primary up to about "state loaded", the NATS
//    servers' during the stream replay) and the load average: on 2 shared cores the stream
//    replay's time is mostly how much CPU the servers and the daemon get.
// The NATS servers are the bench's own (free ports, temp store dirs), never the one at 4222.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { natsServerPath, startNats, type NatsCluster } from '../../test/helpers/nats.ts';
import { TICKD } from '../../test/helpers/daemon.ts';
import { benchDir, pidOf, startDaemon, stopDaemon } from '../lib/harness.ts';
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

/** User + system CPU seconds `pid` has used (Linux /proc; clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Replay {
  /** "starting" -> "state loaded", seconds. */
  readonly seconds: number;
  /** CPU seconds of the daemon's primary when "state loaded" was seen. */
  readonly cpu: number;
}

/** A daemon started with `args` in `dir`, stopped once it has loaded its state. */
async function replay(dir: string, args: string[], persistence: 'logfile' | 'memory'): Promise<Replay> {
  const daemon = await startDaemon(dir, { workers: 1, args, config: { database: { persistence, compression_interval: 0 } } });
  try {
    const starting = await daemon.waitForLog((r) => r['msg'] === 'starting');
    const loaded = await daemon.waitForLog((r) => r['msg'] === 'state loaded', 60_000);
    const cpu = cpuSeconds(pidOf(daemon));
    if (loaded['jobs'] !== JOBS) throw new Error(`replay loaded ${String(loaded['jobs'])} jobs, expected ${JOBS}`);
    return { seconds: (logTimeMs(loaded) - logTimeMs(starting)) / 1000, cpu };
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
      let log: Replay;
      let streamed: Replay;
      let serversCpu: number;
      try {
        await buildLogfile(dir.path, JOBS, 1, opts.progress);
        log = await replay(dir.path, [], 'logfile');
        await run(['import', join(dir.path, LOGFILE), ...clusterArgs(nats, 'bench2')]);
        const serversNow = () => nats.servers.reduce((sum, s) => sum + cpuSeconds(s.proc.pid!), 0);
        const before = serversNow();
        streamed = await replay(dir.path, clusterArgs(nats, 'bench2'), 'memory');
        serversCpu = serversNow() - before;
      } finally {
        dir.remove();
      }
      const fromLog = log.seconds;
      const fromStream = streamed.seconds;
      const cpu = `CPU: daemon ${streamed.cpu.toFixed(2)} s (logfile replay ${log.cpu.toFixed(2)} s), NATS servers ${serversCpu.toFixed(2)} s; load ${loadavg()[0]!.toFixed(1)}`;
      opts.progress(`  replay: logfile ${fromLog.toFixed(2)} s, stream ${fromStream.toFixed(2)} s; ${cpu}`);
      const figures: Figure[] = [
        { label: `durable SET/s, 3-server NATS cluster, R3 stream, ${CONNECTIONS} closed-loop conn`, value: stream, unit: 'SET/s',
          note: `the same load on the logfile with fsync, same run: ${logfile.toFixed(0)} SET/s; ratio stream/logfile ${(stream / logfile).toFixed(2)}` },
        { label: '  same load, logfile + fsync (same run)', value: logfile, unit: 'SET/s' },
        { label: `replay ${JOBS.toLocaleString('en')} records from the R3 stream ("starting" -> "state loaded")`, value: fromStream, unit: 's', digits: 2,
          target: { op: '<=', value: 3 * fromLog }, note: `target: 3x the logfile replay of the same state in the same run (${fromLog.toFixed(2)} s); ${cpu}` },
        { label: `  replay of the same ${JOBS.toLocaleString('en')} records from the logfile`, value: fromLog, unit: 's', digits: 2 },
      ];
      return figures;
    } finally {
      await nats.stop();
    }
  },
};
