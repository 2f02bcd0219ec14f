// The connection to the cluster's NATS servers (`--cluster URL[,URL...]`): credentials from a
// URL's userinfo or a creds file, TLS for tls:// URLs (with a CA file), a bounded wait at
// start-up (an unreachable NATS is a startup error naming the URLs), then reconnection for as
// long as the daemon runs. Every change of the connection's state is logged; none of them
// ever throws into the daemon. What the connection was made with is remembered beside it
// (wire/connection.ts), so that the replay can open a bare connection of its own the same way.
//
// A NATS server that asks no login and listens beyond loopback lets anyone who reaches it
// write the cluster's jobs, which the leader runs: connecting to one is a startup error
// unless --cluster-allow-unauthenticated-nats says to go on (then a warning); see openNatsRisk.
import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type Authenticator, type NatsConnection, type ServerInfo } from '@nats-io/transport-node';
import type { ClusterOptions } from '../cli.ts';
import { errorText, StartupError } from '../errors.ts';
import { silentLogger } from '../log.ts';
import { rememberWireOptions } from './wire/connection.ts';
import type { Logger } from '../log.ts';

export interface ClusterConnectOptions {
  readonly urls: readonly string[];
  readonly credsFile: string | null;
  readonly caFile: string | null;
  /** The client name the servers show (the node's name). */
  readonly name: string;
  readonly log: Logger;
  /** How long start-up waits for a first connection. */
  readonly connectTimeoutMs: number;
  /** --cluster-allow-unauthenticated-nats: a server without login beyond loopback is a warning, not an error. */
  readonly allowUnauthenticatedNats: boolean;
}

/** The flag that lets a node run on an open NATS server anyway. */
export const ALLOW_OPEN_NATS_FLAG = '--cluster-allow-unauthenticated-nats';

/** Whether `host` (a server INFO's listen address) is loopback only: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return v4 !== null && isIP(v4[1]!) === 4 && v4[1]!.startsWith('127.');
}

/**
 * What is wrong with the server a connection reached, from its INFO, or null: a server that
 * authenticates nobody (no `auth_required`, no client certificates required) and listens on
 * an address other than loopback (0.0.0.0 and :: included: every interface) lets anyone who
 * reaches it publish to the cluster's subjects, and the leader runs what they write.
 */
export function openNatsRisk(info: Pick<ServerInfo, 'auth_required' | 'tls_verify' | 'host' | 'port'>): string | null {
  if (info.auth_required === true || info.tls_verify === true) return null;
  const host = info.host ?? '';
  if (isLoopbackHost(host)) return null;
  const where = host === '' ? 'every address' : host.includes(':') ? `[${host}]:${info.port}` : `${host}:${info.port}`;
  return `the NATS server requires no authentication and listens on ${where}, beyond loopback: `
    + 'whoever reaches it can write this cluster\'s jobs, which its leader runs';
}

/** What to pass the client: URLs without their userinfo, which becomes user/pass instead. */
export function splitUrls(urls: readonly string[]): { servers: string[]; user?: string; pass?: string; tls: boolean } {
  let user: string | undefined;
  let pass: string | undefined;
  let tls = false;
  const servers = urls.map((text) => {
    const u = new URL(text);
    if (u.protocol === 'tls:') tls = true;
    if (u.username !== '') {
      user = decodeURIComponent(u.username);
      pass = decodeURIComponent(u.password);
    }
    return `${u.protocol}//${u.host}`;
  });
  return { servers, tls, ...(user === undefined ? {} : { user, pass }) };
}

/** Where the URLs point, for messages: never their credentials. */
export function showUrls(urls: readonly string[]): string {
  return splitUrls(urls).servers.join(',');
}

export async function connectCluster(o: ClusterConnectOptions): Promise<NatsConnection> {
  const { servers, user, pass, tls } = splitUrls(o.urls);
  let authenticator: Authenticator | undefined;
  let nc: NatsConnection;
  try {
    authenticator = o.credsFile === null ? undefined : credsAuthenticator(readFileSync(o.credsFile));
    nc = await connect({
      servers,
      name: o.name,
      timeout: o.connectTimeoutMs,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      ...(user === undefined ? {} : { user, pass }),
      ...(authenticator === undefined ? {} : { authenticator }),
      ...(tls || o.caFile !== null ? { tls: o.caFile === null ? {} : { caFile: o.caFile } } : {}),
    });
  } catch (err) {
    throw new StartupError('cluster', 'ClusterError', `cannot connect to NATS at ${showUrls(o.urls)}: ${errorText(err)}`);
  }
  const risk = nc.info === undefined ? null : openNatsRisk(nc.info);
  if (risk !== null && !o.allowUnauthenticatedNats) {
    await nc.close().catch(() => {});
    throw new StartupError('cluster', 'ClusterError', `${risk}. Configure authorization and TLS on the NATS servers `
      + `(etc/nats/nats-server.conf, tickd(8) SECURITY), or pass ${ALLOW_OPEN_NATS_FLAG} to run anyway (NATS at ${showUrls(o.urls)})`);
  }
  if (risk !== null) {
    o.log.warn({ server: nc.getServer(), flag: ALLOW_OPEN_NATS_FLAG },
      `INSECURE: ${risk}; running anyway, as ${ALLOW_OPEN_NATS_FLAG} says. Configure authorization and TLS on the NATS servers (tickd(8) SECURITY)`);
  }
  rememberWireOptions(nc, {
    servers, tls: tls || o.caFile !== null, caFile: o.caFile, name: o.name,
    ...(user === undefined ? {} : { user, pass }), ...(authenticator === undefined ? {} : { authenticator }),
  });
  o.log.info({ server: nc.getServer() }, 'NATS connection: connected');
  void watch(nc, o.log);
  return nc;
}

async function watch(nc: NatsConnection, log: Logger): Promise<void> {
  try {
    for await (const s of nc.status()) {
      switch (s.type) {
        case 'disconnect': log.warn({ server: s.server }, 'NATS connection: lost'); break;
        case 'reconnecting': log.debug('NATS connection: reconnecting'); break;
        case 'reconnect': {
          log.info({ server: s.server }, 'NATS connection: connected again');
          // Another server of the cluster (one the first INFO listed, perhaps) may be open.
          const risk = nc.info === undefined ? null : openNatsRisk(nc.info);
          if (risk !== null) log.warn({ server: s.server }, `INSECURE: ${risk} (tickd(8) SECURITY)`);
          break;
        }
        case 'close': log.info('NATS connection: closed'); return;
        default: break;
      }
    }
  } catch (err) {
    log.warn({ err: (err as Error)?.message }, 'NATS connection: status stream ended');
  }
}

/** How long connectOffline waits for NATS before it gives up. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Connects a process other than the daemon's primary (`tickd dump`, `tickd import`, the
 * checkpoint maker in the compaction child) to the cluster's NATS, logging nothing.
 */
export function connectOffline(cluster: ClusterOptions, name: string): Promise<NatsConnection> {
  return connectCluster({
    urls: cluster.urls, credsFile: cluster.credsFile, caFile: cluster.caFile, name, log: silentLogger(), connectTimeoutMs: CONNECT_TIMEOUT_MS,
    allowUnauthenticatedNats: cluster.allowUnauthenticatedNats,
  });
}
