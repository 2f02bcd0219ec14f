// The connection to the cluster's NATS servers (`--cluster URL[,URL...]`): credentials from a
// URL's userinfo or a creds file, TLS for tls:// URLs (with a CA file), a bounded wait at
// start-up (an unreachable NATS is a startup error naming the URLs), then reconnection for as
// long as the daemon runs. Every change of the connection's state is logged; none of them
// ever throws into the daemon. What the connection was made with is remembered beside it
// (wire/connection.ts), so that the replay can open a bare connection of its own the same way.
import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type Authenticator, type NatsConnection } from '@nats-io/transport-node';
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
        case 'reconnect': log.info({ server: s.server }, 'NATS connection: connected again'); break;
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
  });
}
