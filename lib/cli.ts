// Command-line parsing (tickd(8) SYNOPSIS, OPTIONS). Pure: returns what to do, or a usage
// error; main decides how to act on it. The environment is an argument, read for one thing:
// the configuration file is `-c`, else TICKD_CONFIG (unset or empty: none), else none, and
// then every default applies (tickd(8) ENVIRONMENT).
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { availableParallelism, hostname } from 'node:os';
import { clusterNameError } from './domain/cluster-name.ts';
import { parseTagText } from './domain/node-tags.ts';
import { LOG_FORMATS, type LogFormat } from './log-format.ts';

/** Cluster mode (tickd(8) CLUSTER MODE): the log on a NATS JetStream stream. */
export interface ClusterOptions {
  /** NATS server URLs (nats:// or tls://, userinfo allowed). */
  readonly urls: readonly string[];
  readonly credsFile: string | null;
  readonly caFile: string | null;
  /** Names the stream, its subjects and the lease bucket: several clusters can share NATS. */
  readonly name: string;
  readonly nodeName: string;
  /** Stream replicas when tickd creates the stream. */
  readonly replicas: number;
  readonly leaseTtlMs: number;
  /** Records written after the last checkpoint that make the leader write a new one (at least a quarter of the state). */
  readonly checkpointRecords: number;
  /** The cluster's shared secrets (tickd(8) SECURITY): every forwarded batch and stream record is sealed with them (required: SECRET_REQUIRED). */
  readonly secretFile: string | null;
  /** Connect to a NATS server that asks no credentials on a non-loopback address (tickd(8) SECURITY). */
  readonly allowUnauthenticatedNats: boolean;
  /** This node's tags (--node-tags; null: not given, the config file's `[cluster] node_tags` then). */
  readonly nodeTags: readonly string[] | null;
}

export type CliAction =
  | {
    readonly mode: 'run'; readonly config: string | null; readonly workers: number; readonly pidfile: string | null;
    readonly maxInflight: number; readonly tickSliceUs: number;
    /** Runner child processes the executions run in (tickd(8) "Runner processes"). */
    readonly runnerProcesses: number;
    /** How log records are written: JSON lines, or one readable line each (lib/log-format.ts). */
    readonly logFormat: LogFormat;
    /** null: the single-node daemon, its log in the logfile (or memory). */
    readonly cluster: ClusterOptions | null;
  }
  | { readonly mode: 'check'; readonly config: string | null }
  | { readonly mode: 'dump'; readonly argv: string[] }
  | { readonly mode: 'import'; readonly argv: string[] }
  | { readonly mode: 'ctl'; readonly argv: string[] }
  | { readonly mode: 'version' }
  | { readonly mode: 'help' }
  | { readonly mode: 'usage-error'; readonly message: string };

export const USAGE = `Usage:
  tickd [-c FILE] [-w N] [--pidfile FILE] [--max-inflight N] [--runner-processes N]
        [--tick-slice US] [--log-format json|pretty]
                               run the daemon in the foreground
  tickd --check [-c FILE]      validate the configuration and token file, then exit
  tickd dump LOGFILE [--format text|json] [--compact] [--follow]
  tickd dump --cluster URL[,URL...] --cluster-secret-file FILE [--cluster-name NAME]
             [--format text|json] [--compact]
                               print a logfile's or a cluster stream's records
  tickd import LOGFILE --cluster URL[,URL...] --cluster-secret-file FILE
               [--cluster-name NAME] [--cluster-replicas N] [--reseal]
                               copy a logfile's last states into an empty cluster stream
                               (--reseal: LOGFILE is a backup of the stream an older
                               tickd wrote, which is then sealed anew)
  tickd ctl [OPTIONS] COMMAND [ARGUMENTS]
                               the command-line client (tickd ctl help, tickd-ctl(1))
  tickd --version | --help

Options:
  -c, --config FILE      configuration file (TOML); without it, the file TICKD_CONFIG
                         names; without either, every default applies
  -w, --workers N        connection worker processes (default: half the CPUs, 1 to 4)
      --pidfile FILE     write the primary's pid once listeners are bound; removed at exit
      --max-inflight N   executions running at once (default 256); more wait in a queue
      --runner-processes N
                         runner child processes the executions run in, 1 to 64
                         (default 1)
      --tick-slice US    the scheduler slice of the tick thread and of each runner child, in
                         microseconds, 100 to 100000 (default 100, Linux 6.12+); 0 keeps the
                         kernel's default
      --log-format FMT   log records on stderr: json (default; a JSON object a line)
                         or pretty (a readable line a record, for a terminal)
      --check            validate configuration and exit 0 printing "configuration ok"

Cluster mode (the log on a NATS JetStream stream; tickd(8) CLUSTER MODE):
      --cluster URL[,URL...]  NATS servers: nats://[user:pass@]host:port, or tls://...
      --cluster-creds FILE    NATS credentials file
      --cluster-ca FILE       CA certificate for tls:// servers
      --cluster-name NAME     stream and lease of this cluster (default tickd)
      --cluster-secret-file FILE
                              the cluster's shared secrets, one a line (required: the
                              first signs, every one verifies; tickd(8) SECURITY)
      --cluster-allow-unauthenticated-nats
                              connect even to a NATS server that asks no credentials
                              on a non-loopback address (anyone reaching it can deny
                              service)
      --node-name NAME        this node's name (default: the host name)
      --node-tags TAG[,TAG...]
                              this node's tags: jobs whose rule requires tags (on) run
                              only on nodes having all of them (default: [cluster]
                              node_tags of the config file)
      --cluster-replicas N    stream replicas when tickd creates it, 1 to 5 (default 3;
                              capped at the JetStream servers there are)
      --lease-ttl DURATION    leader lease time to live: 3s, 1500ms (default 3s; 0.5s to 60s)
      --checkpoint-records N  records written since the last checkpoint that make the
                              leader write a new one, at least a quarter of the jobs and
                              rules there are (default 10000)
  -V, --version          print the version
  -h, --help             print this help
`;

export const DEFAULT_MAX_INFLIGHT = 256;

/** The most workers the default gives, however many CPUs (tickd(8) --workers). */
export const MAX_DEFAULT_WORKERS = 4;

/**
 * The default worker count: half the CPUs, at least 1, at most MAX_DEFAULT_WORKERS. Measured
 * (bench row `workers`, 2 cores): a pipelined SET costs the primary's one thread 1.6-1.8 us
 * and the workers 3.1 us, so about two workers' worth of CPU keeps the primary busy and more
 * cannot raise the rate; on 2 cores 1 worker did as well as 2, 4 or 8 (283k, 267k, 234k,
 * 205k SET/s) and each worker is about 70 MB resident. Half the CPUs leaves the rest to the
 * primary, the runner child and the jobs.
 */
export function defaultWorkers(cpus: number): number {
  return Math.min(MAX_DEFAULT_WORKERS, Math.max(1, Math.floor(cpus / 2)));
}
/** One runner child: it spawns and sends far faster than one scheduler fires on a small machine. */
export const DEFAULT_RUNNER_PROCESSES = 1;
export const MAX_RUNNER_PROCESSES = 64;
/** The kernel's smallest scheduler slice (sched_setattr's sched_runtime), in microseconds. */
export const MIN_SLICE_US = 100;
/** The kernel's largest slice, in microseconds. */
export const MAX_SLICE_US = 100_000;
export const DEFAULT_TICK_SLICE_US = MIN_SLICE_US;

/** parseArgs options naming a cluster's NATS: the daemon, `tickd dump` and `tickd import` take them. */
export const CLUSTER_CONNECTION_OPTIONS = {
  cluster: { type: 'string' },
  'cluster-name': { type: 'string' },
  'cluster-creds': { type: 'string' },
  'cluster-ca': { type: 'string' },
  'cluster-secret-file': { type: 'string' },
  'cluster-allow-unauthenticated-nats': { type: 'boolean' },
} as const;

/**
 * node:util parseArgs, strict, over `args`: the parsed values, or its complaint as the text of a
 * usage error (the daemon, `tickd dump` and `tickd import` all answer a usage error so).
 */
export function parseArgsOrUsage<O extends ParseArgsOptionsConfig>(o: { args: readonly string[]; allowPositionals: boolean; options: O }) {
  try {
    return parseArgs({ args: [...o.args], strict: true, allowPositionals: o.allowPositionals, options: o.options });
  } catch (err) {
    return (err as Error).message;
  }
}

/** The environment parseCli reads: TICKD_CONFIG only. */
export type CliEnv = Readonly<Record<string, string | undefined>>;

export function parseCli(argv: readonly string[], env: CliEnv = {}): CliAction {
  if (argv[0] === 'dump') return { mode: 'dump', argv: argv.slice(1) };
  if (argv[0] === 'import') return { mode: 'import', argv: argv.slice(1) };
  if (argv[0] === 'ctl') return { mode: 'ctl', argv: argv.slice(1) };
  const parsed = parseArgsOrUsage({
    args: argv,
    allowPositionals: false,
    options: {
      config: { type: 'string', short: 'c' },
      workers: { type: 'string', short: 'w' },
      pidfile: { type: 'string' },
      'max-inflight': { type: 'string' },
      'runner-processes': { type: 'string' },
      'tick-slice': { type: 'string' },
      'log-format': { type: 'string' },
      ...CLUSTER_CONNECTION_OPTIONS,
      'node-name': { type: 'string' },
      'node-tags': { type: 'string' },
      'cluster-replicas': { type: 'string' },
      'lease-ttl': { type: 'string' },
      'checkpoint-records': { type: 'string' },
      check: { type: 'boolean' },
      version: { type: 'boolean', short: 'V' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (typeof parsed === 'string') return { mode: 'usage-error', message: parsed };
  const v = parsed.values;
  if (v.help) return { mode: 'help' };
  if (v.version) return { mode: 'version' };
  if (v.config === '') return { mode: 'usage-error', message: 'option -c/--config needs a file name' };
  const config = v.config ?? (env['TICKD_CONFIG'] || null);
  if (v.check) return { mode: 'check', config };
  const workers = v.workers === undefined ? defaultWorkers(availableParallelism()) : positiveInt(v.workers);
  if (workers === null) return { mode: 'usage-error', message: `--workers must be a positive integer, got "${v.workers}"` };
  const maxInflight = v['max-inflight'] === undefined ? DEFAULT_MAX_INFLIGHT : positiveInt(v['max-inflight']);
  if (maxInflight === null) return { mode: 'usage-error', message: `--max-inflight must be a positive integer, got "${v['max-inflight']}"` };
  const runnerProcesses = v['runner-processes'] === undefined ? DEFAULT_RUNNER_PROCESSES : positiveInt(v['runner-processes']);
  if (runnerProcesses === null || runnerProcesses > MAX_RUNNER_PROCESSES) return { mode: 'usage-error', message: `--runner-processes must be 1 to ${MAX_RUNNER_PROCESSES}, got "${v['runner-processes']}"` };
  const tickSliceUs = v['tick-slice'] === undefined ? DEFAULT_TICK_SLICE_US : sliceUs(v['tick-slice']);
  if (tickSliceUs === null) return { mode: 'usage-error', message: `--tick-slice must be 0 or ${MIN_SLICE_US} to ${MAX_SLICE_US} microseconds, got "${v['tick-slice']}"` };
  const logFormat = v['log-format'] ?? 'json';
  if (!isLogFormat(logFormat)) return { mode: 'usage-error', message: `--log-format must be ${LOG_FORMATS.join(' or ')}, got "${logFormat}"` };
  const cluster = parseCluster(v);
  if (typeof cluster === 'string') return { mode: 'usage-error', message: cluster };
  if (cluster !== null && cluster.secretFile === null) return { mode: 'usage-error', message: SECRET_REQUIRED };
  let nodeTags: readonly string[] | null = null;
  if (v['node-tags'] !== undefined) {
    if (cluster === null) return { mode: 'usage-error', message: '--node-tags needs --cluster' };
    const tags = parseTagText(v['node-tags']);
    if ('error' in tags) return { mode: 'usage-error', message: `--node-tags: ${tags.error}` };
    nodeTags = tags.tags;
  }
  return { mode: 'run', config, workers, pidfile: v.pidfile ?? null, maxInflight, runnerProcesses, tickSliceUs, logFormat, cluster: cluster === null ? null : { ...cluster, nodeTags } };
}

/** The usage error of a cluster command without --cluster-secret-file (the daemon, dump, import). */
export const SECRET_REQUIRED = '--cluster needs --cluster-secret-file: the file of the secret every node of the cluster shares (tickd(8) SECURITY)';

export const DEFAULT_CLUSTER_NAME = 'tickd';
export const DEFAULT_CLUSTER_REPLICAS = 3;
export const DEFAULT_LEASE_TTL_MS = 3000;
export const DEFAULT_CHECKPOINT_RECORDS = 10_000;
const CLUSTER_FLAGS = ['cluster-creds', 'cluster-ca', 'cluster-name', 'cluster-secret-file', 'node-name', 'cluster-replicas', 'lease-ttl', 'checkpoint-records'] as const;
const NODE_NAME = /^[A-Za-z0-9._-]{1,253}$/;

/** The cluster flags, null without --cluster, or a usage error (also for `tickd dump`, `tickd import`). */
export function parseCluster(
  v: Partial<Record<'cluster' | (typeof CLUSTER_FLAGS)[number], string> & { 'cluster-allow-unauthenticated-nats': boolean }>,
): ClusterOptions | null | string {
  if (v.cluster === undefined) {
    const stray = [...CLUSTER_FLAGS, 'cluster-allow-unauthenticated-nats' as const].find((f) => v[f] !== undefined);
    return stray === undefined ? null : `--${stray} needs --cluster`;
  }
  const urls = v.cluster.split(',');
  for (const url of urls) {
    let u: URL | null = null;
    try { u = new URL(url); } catch { /* reported below */ }
    if (u === null || (u.protocol !== 'nats:' && u.protocol !== 'tls:') || u.hostname === '' || u.pathname !== '') {
      return `--cluster takes nats://host:port or tls://host:port URLs, comma-separated; got "${url.replace(/\/\/[^@/]*@/, '//***@')}"`;
    }
  }
  const name = v['cluster-name'] ?? DEFAULT_CLUSTER_NAME;
  const nameError = clusterNameError(name);
  if (nameError !== null) return `--cluster-name ${nameError}, got "${name}"`;
  const nodeName = v['node-name'] ?? hostname();
  if (!NODE_NAME.test(nodeName)) return `--node-name must be 1 to 253 characters of letters, digits, ".", "_" and "-", got "${nodeName}"`;
  const replicas = v['cluster-replicas'] === undefined ? DEFAULT_CLUSTER_REPLICAS : positiveInt(v['cluster-replicas']);
  if (replicas === null || replicas > 5) return `--cluster-replicas must be 1 to 5, got "${v['cluster-replicas']}"`;
  const leaseTtlMs = v['lease-ttl'] === undefined ? DEFAULT_LEASE_TTL_MS : durationMs(v['lease-ttl']);
  if (leaseTtlMs === null || leaseTtlMs < 500 || leaseTtlMs > 60_000) return `--lease-ttl must be a duration from 0.5s to 60s (3s, 1500ms), got "${v['lease-ttl']}"`;
  const checkpointRecords = v['checkpoint-records'] === undefined ? DEFAULT_CHECKPOINT_RECORDS : positiveInt(v['checkpoint-records']);
  if (checkpointRecords === null || checkpointRecords > 1_000_000_000) return `--checkpoint-records must be 1 to 1000000000, got "${v['checkpoint-records']}"`;
  const file = (f: string | undefined): string | null => (f === undefined || f === '' ? null : f);
  const secretFile = file(v['cluster-secret-file']);
  return {
    urls, credsFile: file(v['cluster-creds']), caFile: file(v['cluster-ca']), name, nodeName, replicas, leaseTtlMs, checkpointRecords,
    secretFile, allowUnauthenticatedNats: v['cluster-allow-unauthenticated-nats'] === true, nodeTags: null,
  };
}

/** `3s`, `1.5s`, `1500ms` -> milliseconds; null for anything else. */
function durationMs(text: string): number | null {
  const m = /^(\d{1,5}(?:\.\d{1,3})?)(ms|s)$/.exec(text);
  if (m === null) return null;
  const n = Number(m[1]) * (m[2] === 's' ? 1000 : 1);
  return Number.isInteger(n) ? n : Math.round(n);
}

function isLogFormat(text: string): text is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(text);
}

function sliceUs(text: string): number | null {
  if (!/^\d{1,6}$/.test(text)) return null;
  const n = Number(text);
  return n === 0 || (n >= MIN_SLICE_US && n <= MAX_SLICE_US) ? n : null;
}

function positiveInt(text: string): number | null {
  if (!/^\d{1,6}$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 ? n : null;
}
