// Row: cluster mode (tickd(8) CLUSTER MODE) beside the single-node logfile, in one run.
// 1. Durable SET/s, 64 closed-loop connections for 5 s after 1 s of warm-up: once against a
//    3-server NATS cluster on this machine with the stream at 3 replicas (an OK means a
//    majority of servers stored the record), once in logfile mode with fsync (an OK means it
//    is on disk); the ratio beside them.
// 2. Replay of 1 000 000 records: a logfile built through a daemon, then imported into the
//    stream (`tickd import`); a daemon started on each: "starting" -> "state loaded". Three
//    stream replays: the whole stream one message per record (right after the import: no
//    checkpoint yet; that daemon then leads and has the checkpoint made, as any leader
//    would); from that checkpoint; from it with the most a leader lets pile up after one
//    (a quarter of the state: 250 000 records written after it, published here as the
//    import publishes). Beside the times, the CPU each used (the daemon's primary up to
//    about "state loaded", the NATS servers' during the stream replay) and the load average:
//    on 2 shared cores the stream replay's time is mostly how much CPU the servers and the
//    daemon get.
// The NATS servers are the bench's own (free ports, temp store dirs), never the one at 4222.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { natsServerPath, startNats, type NatsCluster } from '../../test/helpers/nats.ts';
import { connectCluster } from '../../lib/jetstream/connect.ts';
import { StreamJournal } from '../../lib/jetstream/journal.ts';
import { clusterSubjects } from '../../lib/jetstream/subjects.ts';
import { silentLogger } from '../../lib/log.ts';
import { TICKD } from '../../test/helpers/daemon.ts';
import { testKeys, testSecretFile } from '../../test/helpers/cluster-secret.ts';
import { benchDir, pidOf, startDaemon, stopDaemon } from '../lib/harness.ts';
import { closedLoop } from './durable.ts';
import { buildLogfile, LOGFILE, logTimeMs } from '../lib/logfile-load.ts';
import type { Figure, Row } from '../lib/suite.ts';

const CONNECTIONS = 64;
const JOBS = 1_000_000;
/** The most a leader lets be written after a checkpoint before it has the next one made. */
const TAIL = JOBS / 4;
const LOAD_CONNECTIONS = 4; // as buildLogfile loads: ids log.<c>.<i>

const clusterArgs = (nats: NatsCluster, name: string): string[] =>
  ['--cluster', nats.urls, '--cluster-name', name, '--cluster-replicas', String(nats.servers.length), '--cluster-secret-file', testSecretFile()];

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
  /** The daemon's "checkpoint made" log record, when it was waited for. */
  readonly made?: Record<string, unknown>;
}

/**
 * A daemon started with `args` in `dir`, stopped once it has loaded its state (and, with
 * `checkpoint`, once it has led and had a checkpoint made).
 */
async function replay(dir: string, args: string[], persistence: 'logfile' | 'memory', checkpoint = false): Promise<Replay> {
  const daemon = await startDaemon(dir, { workers: 1, args, config: { database: { persistence, compression_interval: 0 } } });
  try {
    const starting = await daemon.waitForLog((r) => r['msg'] === 'starting');
    const loaded = await daemon.waitForLog((r) => r['msg'] === 'state loaded', 60_000);
    const cpu = cpuSeconds(pidOf(daemon));
    if (loaded['jobs'] !== JOBS) throw new Error(`replay loaded ${String(loaded['jobs'])} jobs, expected ${JOBS}`);
    const made = checkpoint ? await daemon.waitForLog((r) => r['msg'] === 'checkpoint made', 180_000) : undefined;
    return { seconds: (logTimeMs(loaded) - logTimeMs(starting)) / 1000, cpu, ...(made === undefined ? {} : { made }) };
  } finally {
    await stopDaemon(daemon);
  }
}

/** TAIL records written to the stream after its checkpoint, as `tickd import` writes: new times for existing jobs. */
async function writeTail(nats: NatsCluster, name: string): Promise<void> {
  const nc = await connectCluster({ urls: nats.urls.split(','), credsFile: null, caFile: null, name: 'bench-tail', log: silentLogger(), connectTimeoutMs: 10_000, allowUnauthenticatedNats: false });
  try {
    const jsm = await jetstreamManager(nc);
    const subjects = clusterSubjects(name);
    const { state } = await jsm.streams.info(subjects.stream);
    const journal = new StreamJournal({ js: jetstream(nc), jsm, subjects, lastSeq: state.last_seq, writerId: `bench/${randomUUID()}`, log: silentLogger(), onFenced: () => {}, keys: testKeys });
    const perConnection = JOBS / LOAD_CONNECTIONS;
    for (let n = 0; n < TAIL;) {
      for (const end = Math.min(TAIL, n + 1_000); n < end; n++) {
        journal.append({ t: 'job', job: { id: `log.${n % LOAD_CONNECTIONS}.${Math.floor(n / LOAD_CONNECTIONS) % perConnection}`, execution: 4_100_000_000_000_000_000n + BigInt(n), status: 'planned' } });
      }
      await journal.flush();
    }
    await journal.close();
  } finally {
    await nc.close();
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
      const streamed: { whole: Replay; checkpoint: Replay; tail: Replay } = {} as never;
      const serversCpu = { whole: 0, checkpoint: 0, tail: 0 };
      try {
        await buildLogfile(dir.path, JOBS, 1, opts.progress);
        log = await replay(dir.path, [], 'logfile');
        await run(['import', join(dir.path, LOGFILE), ...clusterArgs(nats, 'bench2')]);
        const serversNow = () => nats.servers.reduce((sum, s) => sum + cpuSeconds(s.proc.pid!), 0);
        const measured = async (which: keyof typeof serversCpu, checkpoint = false): Promise<void> => {
          const before = serversNow();
          streamed[which] = await replay(dir.path, clusterArgs(nats, 'bench2'), 'memory', checkpoint);
          serversCpu[which] = serversNow() - before;
        };
        await measured('whole', true);
        await measured('checkpoint');
        await writeTail(nats, 'bench2');
        await measured('tail');
      } finally {
        dir.remove();
      }
      const fromLog = log.seconds;
      const cpu = (which: keyof typeof serversCpu): string => `CPU: daemon ${streamed[which].cpu.toFixed(2)} s (logfile replay ${log.cpu.toFixed(2)} s), NATS servers ${serversCpu[which].toFixed(2)} s; load ${loadavg()[0]!.toFixed(1)}`;
      opts.progress(`  replay: logfile ${fromLog.toFixed(2)} s; stream: whole ${streamed.whole.seconds.toFixed(2)} s, checkpoint ${streamed.checkpoint.seconds.toFixed(2)} s, checkpoint + ${TAIL} ${streamed.tail.seconds.toFixed(2)} s`);
      const target = { op: '<=', value: 3 * fromLog } as const;
      const note = (which: keyof typeof serversCpu): string => `target: 3x the logfile replay of the same state in the same run (${fromLog.toFixed(2)} s); ${cpu(which)}`;
      const figures: Figure[] = [
        { label: `durable SET/s, 3-server NATS cluster, R3 stream, ${CONNECTIONS} closed-loop conn`, value: stream, unit: 'SET/s',
          note: `the same load on the logfile with fsync, same run: ${logfile.toFixed(0)} SET/s; ratio stream/logfile ${(stream / logfile).toFixed(2)}` },
        { label: '  same load, logfile + fsync (same run)', value: logfile, unit: 'SET/s' },
        { label: `replay ${JOBS.toLocaleString('en')} records from the R3 stream and its checkpoint ("starting" -> "state loaded")`, value: streamed.checkpoint.seconds, unit: 's', digits: 2,
          target, note: note('checkpoint') },
        { label: `  the same, ${TAIL.toLocaleString('en')} records written after the checkpoint (the most before the next)`, value: streamed.tail.seconds, unit: 's', digits: 2,
          target, note: note('tail') },
        { label: '  the same stream read whole, one message per record (no checkpoint yet)', value: streamed.whole.seconds, unit: 's', digits: 2,
          note: `${cpu('whole')}; then, leading, that daemon had the checkpoint made in ${String(streamed.whole.made?.['ms'])} ms (${Math.round(Number(streamed.whole.made?.['bytes']) / 1e6)} MB)` },
        { label: `  replay of the same ${JOBS.toLocaleString('en')} records from the logfile`, value: fromLog, unit: 's', digits: 2 },
      ];
      return figures;
    } finally {
      await nats.stop();
    }
  },
};
