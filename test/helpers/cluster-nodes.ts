// Several tickd nodes of one cluster on real nats-server processes (test/helpers/nats.ts), and
// an HTTP sink that records every job an http rule fires, for the failover tests and the bench.
import { createServer, type Server } from 'node:http';
import { Daemon, type ConfigTree } from './daemon.ts';
import type { NatsCluster } from './nats.ts';
import { testSecretFile } from './cluster-secret.ts';
import { tempDir } from './tmp.ts';

export interface NodeSpec {
  readonly cluster: string;
  readonly name: string;
  readonly ttl?: string;
  readonly extra?: readonly string[];
  /** Config sections merged over the defaults (e.g. `{ log: { level: 'debug' } }`); HTTP stays on port 0 unless given. */
  readonly config?: ConfigTree;
  /** Environment added to the daemon's (its runners inherit it). */
  readonly env?: Readonly<Record<string, string>>;
}

export function nodeArgs(nats: NatsCluster, spec: NodeSpec): string[] {
  return [
    '--cluster', nats.urls, '--cluster-name', spec.cluster, '--node-name', spec.name, '--cluster-secret-file', testSecretFile(),
    '--cluster-replicas', String(nats.servers.length), '--lease-ttl', spec.ttl ?? '3s', ...(spec.extra ?? []),
  ];
}

/** A node, started and ready (a follower or the leader), with HTTP on an ephemeral port. */
export async function startNode(nats: NatsCluster, spec: NodeSpec): Promise<Daemon> {
  const config: ConfigTree = { ...spec.config, http: { listen: '127.0.0.1:0', ...spec.config?.['http'] } };
  return Daemon.start({ args: nodeArgs(nats, spec), dir: tempDir(), readyTimeoutMs: 30_000, config, ...(spec.env === undefined ? {} : { env: spec.env }) });
}

/** The role this node's log says it has now ('follower' until it says otherwise). */
export function roleOf(d: Daemon): 'leader' | 'follower' {
  for (let i = d.stderr.length - 1; i >= 0; i--) {
    const l = d.stderr[i]!;
    if (l.includes('"msg":"role changed: leader"')) return 'leader';
    if (l.includes('"msg":"role changed: follower"')) return 'follower';
  }
  return 'follower';
}

/** The time (ms since the epoch) this node's log says it last became leader, or null. */
export function ledSince(d: Daemon): number | null {
  for (let i = d.stderr.length - 1; i >= 0; i--) {
    const l = d.stderr[i]!;
    if (!l.includes('"msg":"role changed: leader"')) continue;
    return Date.parse((JSON.parse(l) as { time: string }).time);
  }
  return null;
}

/** Waits until exactly one of `nodes` leads; returns it. */
export async function waitForLeader(nodes: readonly Daemon[], timeoutMs = 20_000): Promise<Daemon> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const leaders = nodes.filter((d) => d.proc.exitCode === null && d.proc.signalCode === null && roleOf(d) === 'leader');
    if (leaders.length === 1) return leaders[0]!;
    if (Date.now() > deadline) throw new Error(`no single leader after ${timeoutMs} ms (${leaders.length} say they lead)`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface Firing {
  readonly id: string;
  /** Arrival at the sink, ms since the epoch. */
  readonly at: number;
}

/** Records every POST an http rule sends: {"job_id": ..., "execution": ...}. */
export class Sink {
  readonly fired: Firing[] = [];
  private readonly server: Server;
  port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          const { job_id: id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { job_id: string };
          this.fired.push({ id, at: Date.now() });
        } catch { /* not a job */ }
        res.writeHead(200).end();
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** How many times each job fired. */
  counts(): Map<string, number> {
    const m = new Map<string, number>();
    for (const f of this.fired) m.set(f.id, (m.get(f.id) ?? 0) + 1);
    return m;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}
