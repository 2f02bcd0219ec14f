// Real nats-server processes for the cluster-mode tests: one server, or a cluster of three
// routed on loopback, each with JetStream on and its own store directory, on free ports. They
// never touch the shared server at 4222. Under CI=true a missing nats-server fails the test;
// elsewhere the test is skipped with a message naming it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { connect as natsConnect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { tempDir } from './tmp.ts';

const CANDIDATES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

/** The nats-server binary, or null when this machine has none. */
export function natsServerPath(): string | null {
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/** Skips the calling suite (or fails it under CI=true) when there is no nats-server. */
export function requireNatsServer(ctx: Mocha.Context): string {
  const path = natsServerPath();
  if (path !== null) return path;
  if (process.env['CI'] === 'true') throw new Error(`nats-server is missing (looked in ${CANDIDATES.join(', ')}); CI needs it`);
  console.log(`      (skipped: nats-server is missing; looked in ${CANDIDATES.join(', ')})`);
  ctx.skip();
}

/** A port nobody listens on right now (the kernel picks it; we release it at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

const running = new Set<ChildProcess>();
/** The last 4 000 characters each server wrote to stderr, for the error when a cluster does not form. */
const logs = new WeakMap<ChildProcess, string>();
process.on('exit', () => { for (const p of running) p.kill('SIGKILL'); });

export interface NatsServer {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly storeDir: string;
  proc: ChildProcess;
  /** SIGKILL; resolves once it is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and store. */
  restart(): Promise<void>;
}

interface Spec {
  readonly name: string;
  readonly port: number;
  readonly clusterPort: number | null;
  readonly routes: readonly number[];
  readonly storeDir: string;
  /** More nats-server arguments (TLS, users, a config file). */
  readonly extra: readonly string[];
}

async function launch(bin: string, spec: Spec): Promise<ChildProcess> {
  const args = [...spec.extra, '-a', '127.0.0.1', '-p', String(spec.port), '-js', '-sd', spec.storeDir, '-n', spec.name];
  if (spec.clusterPort !== null) {
    args.push('--cluster_name', 'tickdtest', '--cluster', `nats://127.0.0.1:${spec.clusterPort}`,
      '--routes', spec.routes.map((p) => `nats://127.0.0.1:${p}`).join(','));
  }
  const proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  const log = (): string => logs.get(proc) ?? '';
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (c: string) => logs.set(proc, (log() + c).slice(-4000)));
  const deadline = Date.now() + 10_000;
  while (!(await accepts(spec.port))) {
    if (proc.exitCode !== null) throw new Error(`nats-server ${spec.name} exited: ${log()}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`nats-server ${spec.name} did not listen: ${log()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return proc;
}

function server(bin: string, spec: Spec, proc: ChildProcess): NatsServer {
  const s: NatsServer = {
    name: spec.name,
    port: spec.port,
    url: `nats://127.0.0.1:${spec.port}`,
    storeDir: spec.storeDir,
    proc,
    kill: async () => {
      if (s.proc.exitCode !== null || s.proc.signalCode !== null) return;
      const gone = new Promise<void>((r) => s.proc.once('exit', () => r()));
      s.proc.kill('SIGKILL');
      await gone;
    },
    restart: async () => {
      await s.kill();
      s.proc = await launch(bin, spec);
    },
  };
  return s;
}

export interface NatsCluster {
  readonly servers: NatsServer[];
  /** The client URLs, comma-separated, as --cluster takes them. */
  readonly urls: string;
  stop(): Promise<void>;
}

/**
 * `count` servers (1, or 3 routed as one cluster), each with its own store directory, each
 * started with `extra` arguments too (before the helper's own, which win).
 */
export async function startNats(bin: string, count: 1 | 3 = 1, extra: readonly string[] = []): Promise<NatsCluster> {
  const checked = count === 3 && extra.length === 0;
  for (let attempt = 1; ; attempt++) {
    let servers: NatsServer[];
    try {
      servers = await launchAll(bin, count, extra);
    } catch (err) {
      // A port freePort() handed out, taken before the server bound it ("address already in use").
      if (attempt === READY_ATTEMPTS) throw err;
      continue;
    }
    if (!checked) return cluster(servers);
    try {
      await jetStreamReady(servers.map((s) => s.url), READY_MS);
      return cluster(servers);
    } catch (err) {
      const said = servers.map((s) => `${s.name} (${exitState(s.proc)}): ${logs.get(s.proc)?.slice(-600) ?? ''}`).join('\n');
      await Promise.all(servers.map((s) => s.kill())); // the caller never gets them to stop
      if (attempt === READY_ATTEMPTS) throw new Error(`${(err as Error).message} (${attempt} clusters tried, each on new ports)\n${said}`);
    }
  }
}

/**
 * A fresh cluster usually stores an R3 message within seconds. Once in a CI run of 1 700 tests
 * one did not within 60 s ("no suitable peers for placement": a server outside the meta group);
 * a port freePort() handed out can be taken by another socket before the server binds it, so a
 * cluster that is not ready by then is replaced by one on new ports rather than waited for.
 */
const READY_MS = 30_000;
const READY_ATTEMPTS = 3;

async function launchAll(bin: string, count: 1 | 3, extra: readonly string[]): Promise<NatsServer[]> {
  const dir = tempDir();
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const clusterPorts = count === 1 ? [] : await Promise.all(Array.from({ length: count }, () => freePort()));
  const specs: Spec[] = ports.map((port, i) => ({
    name: `n${i + 1}`,
    port,
    clusterPort: count === 1 ? null : clusterPorts[i]!,
    routes: count === 1 ? [] : clusterPorts.filter((_, j) => j !== i),
    storeDir: join(dir, `n${i + 1}`),
    extra,
  }));
  const launched = await Promise.allSettled(specs.map(async (spec) => server(bin, spec, await launch(bin, spec))));
  const up = launched.flatMap((l) => (l.status === 'fulfilled' ? [l.value] : []));
  const failed = launched.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failed === undefined) return up;
  await Promise.all(up.map((s) => s.kill())); // no server of a cluster that did not start is left running
  throw failed.reason;
}

function cluster(servers: NatsServer[]): NatsCluster {
  return {
    servers,
    urls: servers.map((s) => s.url).join(','),
    stop: async () => { await Promise.all(servers.map((s) => s.kill())); },
  };
}

function exitState(proc: ChildProcess): string {
  if (proc.exitCode !== null) return `exited ${proc.exitCode}`;
  if (proc.signalCode !== null) return `killed by ${proc.signalCode}`;
  return 'running';
}

/**
 * Waits until the routed servers store replicated writes: a three-replica probe stream is
 * created, takes a message and is deleted. A fresh three-server cluster usually manages that
 * within seconds, but on a loaded two-core machine its elections once took longer than
 * tickd's own 20 s start-up bound, and the meta leader alone answering (account info) did not
 * mean the servers could place an R3 stream yet: the tests are about tickd, so they start it
 * on a cluster that is up, and the cluster's own elections are not part of the timing.
 */
async function jetStreamReady(urls: string[], withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  const nc = await natsConnect({ servers: urls });
  const probe = `readiness_probe_${process.pid}`;
  try {
    for (;;) {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 5_000 });
        await jsm.streams.add({ name: probe, subjects: [`${probe}.>`], num_replicas: 3 })
          .catch(async (err: unknown) => { if ((await jsm.streams.info(probe).catch(() => null)) === null) throw err; });
        await jetstream(nc, { timeout: 5_000 }).publish(`${probe}.x`, 'ready');
        await jsm.streams.delete(probe);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`the NATS cluster did not store a replicated message within ${withinMs / 1000} s: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    await nc.close();
  }
}

/**
 * A NATS client on `urls` (comma-separated, as NatsCluster.urls), for tests that talk to
 * JetStream themselves. Call closeNatsClients() in after() to close every one still open.
 */
export async function connectNats(urls: string, opts: Partial<NodeConnectionOptions> = {}): Promise<NatsConnection> {
  const nc = await natsConnect({ servers: urls.split(','), ...opts });
  clients.add(nc);
  void nc.closed().then(() => clients.delete(nc));
  return nc;
}

const clients = new Set<NatsConnection>();

export async function closeNatsClients(): Promise<void> {
  await Promise.all([...clients].map((nc) => nc.close().catch(() => undefined)));
}

/** TLS files for servers on loopback (etc/nats/nats-server.conf's names, in one directory). */
export interface TlsFiles {
  readonly dir: string;
  /** The authority's certificate (tickd's --cluster-ca). */
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * A certificate authority and a certificate it signed for IP:127.0.0.1 and DNS:localhost, for
 * serverAuth and clientAuth (a route presents it as a client certificate), made by openssl as
 * etc/nats/nats-server.conf's comment makes them; ca-key.pem stays beside them.
 */
export function makeTlsFiles(dir: string = tempDir('tickd-nats-tls-'), caName = 'tickd NATS CA'): TlsFiles {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const steps: string[][] = [
    ['req', '-x509', ...ec, '-days', '30', '-subj', `/CN=${caName}`, '-keyout', 'ca-key.pem', '-out', 'ca.pem',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    ['req', ...ec, '-subj', '/CN=localhost', '-keyout', 'server-key.pem', '-out', 'server.csr'],
    ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-days', '30',
      '-extfile', 'server.ext', '-out', 'server.pem'],
  ];
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  for (const args of steps) {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args.slice(0, 2).join(' ')} failed: ${r.error?.message ?? r.stderr}`);
  }
  return { dir, ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server-key.pem') };
}

/** `text` with `from` replaced; throws when it is not there (the sample changed under the test). */
export function rewriteConf(text: string, from: RegExp, to: string): string {
  if (!from.test(text)) throw new Error(`the configuration has nothing matching ${from}`);
  return text.replace(from, to);
}

/** The sample's TLS file paths (/etc/nats/tls/...) pointed at `tls`'s directory. */
export function sampleWithTls(sample: string, tls: TlsFiles): string {
  return rewriteConf(sample, /\/etc\/nats\/tls\//g, `${tls.dir}/`);
}

/** Where three copies of the sample run on loopback. */
export interface SampleLayout {
  readonly dir: string;
  readonly clientPorts: readonly number[];
  readonly routePorts: readonly number[];
  readonly tls: TlsFiles;
}

/**
 * The sample, rewritten for server `i` (0, 1, 2) of three on loopback: its server_name, its
 * own ports for clients and routes, its store directory, no HTTP monitoring, the routes to
 * the three loopback servers and the TLS files of layout.tls. Users, permissions and TLS
 * settings stay the sample's.
 */
export function sampleOnLoopback(sample: string, i: number, layout: SampleLayout): string {
  let conf = rewriteConf(sample, /^server_name: n1$/m, `server_name: n${i + 1}`);
  conf = rewriteConf(conf, /^listen: 0\.0\.0\.0:4222$/m, `listen: 127.0.0.1:${layout.clientPorts[i]}`);
  conf = rewriteConf(conf, /^http: .*$/m, '');
  conf = rewriteConf(conf, /^(\s*)store_dir: \/var\/lib\/nats$/m, `$1store_dir: ${join(layout.dir, `n${i + 1}`)}`);
  conf = rewriteConf(conf, /^(\s*)listen: 0\.0\.0\.0:6222$/m, `$1listen: 127.0.0.1:${layout.routePorts[i]}`);
  for (const [k, port] of layout.routePorts.entries()) {
    conf = rewriteConf(conf, new RegExp(`nats-route://n${k + 1}\\.example\\.net:6222`), `nats-route://127.0.0.1:${port}`);
  }
  return sampleWithTls(conf, layout.tls);
}

/** Three copies of a sample configuration running on loopback (startSampleCluster). */
export interface SampleCluster extends SampleLayout {
  readonly procs: ChildProcess[];
  /** The last of each server's log (stderr). */
  readonly logs: string[];
  /** The client URLs, tls://[userinfo@]127.0.0.1:port, as --cluster takes them. */
  urls(userinfo?: string): string[];
  stop(): Promise<void>;
}

/**
 * Starts three servers from `sample` (sampleOnLoopback), each with its own ports, store
 * directory and configuration file; waits until each listens (not for JetStream). TLS files
 * come from makeTlsFiles unless given.
 */
export async function startSampleCluster(bin: string, sample: string, tls: TlsFiles = makeTlsFiles()): Promise<SampleCluster> {
  const dir = tempDir('tickd-nats-sample-');
  const clientPorts = await Promise.all([1, 2, 3].map(() => freePort()));
  const routePorts = await Promise.all([1, 2, 3].map(() => freePort()));
  const layout: SampleLayout = { dir, clientPorts, routePorts, tls };
  const procs: ChildProcess[] = [];
  const logs = ['', '', ''];
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map((p) => new Promise<void>((resolve) => {
      if (p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    })));
  };
  try {
    for (let i = 0; i < 3; i++) {
      const file = join(dir, `n${i + 1}.conf`);
      writeFileSync(file, sampleOnLoopback(sample, i, layout));
      const proc = spawn(bin, ['-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
      running.add(proc);
      proc.once('exit', () => running.delete(proc));
      proc.stderr!.setEncoding('utf8');
      proc.stderr!.on('data', (c: string) => { logs[i] = (logs[i] + c).slice(-20_000); });
      procs.push(proc);
    }
    // Each listens for clients and for routes (a port taken meanwhile ends it: said here).
    const deadline = Date.now() + 10_000;
    for (const [i, port] of clientPorts.entries()) {
      while (!/Listening for route connections/.test(logs[i]!) || !(await accepts(port))) {
        if (procs[i]!.exitCode !== null) throw new Error(`nats-server n${i + 1} exited: ${logs[i]}`);
        if (Date.now() > deadline) throw new Error(`nats-server n${i + 1} did not listen: ${logs[i]}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ...layout, procs, logs, stop,
    urls: (userinfo) => clientPorts.map((p) => `tls://${userinfo === undefined ? '' : `${userinfo}@`}127.0.0.1:${p}`),
  };
}
