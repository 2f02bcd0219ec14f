// The one configuration schema (tickd.toml(5) SECTIONS AND KEYS, ERRORS). The loader, the
// sample etc/tickd.toml and the man page table are all checked against this table, so a key
// exists everywhere or nowhere; the Config type is derived from it, and the loader builds the
// config object by walking it, so a key is written here and nowhere else.
import type { StartupErrorName } from '../errors.ts';
import { LOG_LEVELS } from '../log.ts';

export type KeyType = 'string' | 'bool' | 'int' | 'string[]' | 'listen' | 'path' | 'enum' | 'url';

export interface KeyDef {
  readonly type: KeyType;
  /** null = unset (the key is optional and has no default value). */
  readonly default: string | number | boolean | readonly string[] | null;
  readonly doc: string;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  /**
   * The startup error named when the value is outside `values` or min..max (the spec gives two
   * keys their own names); every other failure, and every key without one, is InvalidValue.
   */
  readonly error?: StartupErrorName;
}

/** flush_interval_ms is a u32 in the spec; compression_interval takes the same bound (a timer in seconds). */
const MAX_U32 = 4294967295;

export const SCHEMA = {
  log: {
    level: { type: 'enum', values: LOG_LEVELS, default: 'info', error: 'InvalidLogLevel', doc: 'Least severe level written to stderr: off, error, warn, info, debug, trace (trace behaves like debug).' },
  },
  controller: {
    listen: { type: 'listen', default: '127.0.0.1:5678', doc: 'TCP protocol address, host:port; IPv6 in brackets ([::1]:5678). Port 5679 is conventional with TLS.' },
    auth_file: { type: 'path', default: null, doc: 'Token file; when set, every TCP connection and HTTP request must authenticate.' },
    tls_cert: { type: 'path', default: null, doc: 'PEM certificate (chain) for TLS on the TCP interface. Requires tls_key.' },
    tls_key: { type: 'path', default: null, doc: 'PEM private key for TLS. Requires tls_cert.' },
  },
  http: {
    listen: { type: 'listen', default: null, doc: 'HTTP JSON API address, host:port (5680 is conventional); unset disables the HTTP interface.' },
  },
  shell: {
    path: { type: 'path', default: '/bin/sh', doc: 'Absolute path of the shell used by shell runners; must exist at startup.' },
    args: { type: 'string[]', default: ['-c'], doc: 'Arguments placed before the command string.' },
  },
  database: {
    persistence: { type: 'enum', values: ['logfile', 'memory'], default: 'logfile', doc: 'logfile: append-only file, durable; memory: nothing on disk, lost at exit.' },
    logfile_path: { type: 'path', default: 'logfile', doc: 'Logfile path, relative to the working directory unless absolute.' },
    fsync_on_persist: { type: 'bool', default: true, doc: 'fsync before a write is acknowledged (one fsync per group of writes).' },
    framerate: { type: 'int', default: 512, min: 1, max: 65535, error: 'FramerateOutOfRange', doc: 'Scheduler tick rate in Hz, 1 to 65535.' },
    compression_interval: { type: 'int', default: 3600, min: 0, max: MAX_U32, doc: 'Seconds between background logfile compactions; 0 disables.' },
    attempt_history: { type: 'int', default: 10, min: 1, max: 100, doc: 'Attempts of each job kept in memory for GET /jobs/{id}/attempts, 1 to 100 (100 000 records in all).' },
  },
  cluster: {
    node_tags: { type: 'string[]', default: [], doc: 'Cluster mode: this node\'s tags (--node-tags overrides them). A rule that requires tags (on) runs its jobs only on nodes having all of them.' },
    placement_wait: { type: 'int', default: 60, min: 1, max: 86400, doc: 'Cluster mode: seconds a job waits for a live node having its rule\'s tags before its attempt fails (outcome no_node).' },
  },
  telemetry: {
    enabled: { type: 'bool', default: false, doc: 'Export metrics, traces and logs over OTLP/HTTP.' },
    endpoint: { type: 'url', default: null, doc: 'Collector base URL (http:// or https://); required when enabled.' },
    service_name: { type: 'string', default: 'tickd', doc: 'The service.name resource attribute.' },
    flush_interval_ms: { type: 'int', default: 5000, min: 0, max: MAX_U32, doc: 'Export batch interval in milliseconds (a u32).' },
  },
} as const satisfies Record<string, Record<string, KeyDef>>;

export type SectionName = keyof typeof SCHEMA;

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
  /** As written in the configuration, for log lines. */
  readonly text: string;
}

/** The value a key holds once loaded: its type's, or null when it has no default and is unset. */
type ValueOf<D extends KeyDef> =
  | (D['type'] extends 'listen' ? ListenAddress
    : D['type'] extends 'enum' ? (D extends { readonly values: readonly (infer V)[] } ? V : never)
    : D['type'] extends 'int' ? number
    : D['type'] extends 'bool' ? boolean
    : D['type'] extends 'string[]' ? readonly string[]
    : string) // path, string, url
  | (D['default'] extends null ? null : never);

type Schema = typeof SCHEMA;

export type ConfigSections = {
  readonly [S in SectionName]: {
    readonly [K in keyof Schema[S]]: Schema[S][K] extends KeyDef ? ValueOf<Schema[S][K]> : never;
  };
};

export interface Config extends ConfigSections {
  /** The file it came from, or null when run on defaults. */
  readonly source: string | null;
}
