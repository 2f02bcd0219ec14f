// Connections opened before they are needed: the primary looks ahead for the next due job
// (lib/engine/lookahead.ts) and, when its rule's runner is http, asks the runner child to
// have a connection to that origin ready. The first request to the origin then finds it
// connected (TCP, and TLS for https) instead of paying the handshake after the job is due.
//
// How: the agent's createConnection (called by the agent for every new socket it makes) hands
// out the spare connection made for the same pool key, if one is there and still open, before
// making a new one. From then on the agent owns that socket exactly as one it made itself
// (keep-alive, counting, the idle timeout), so requests see no difference but the time saved.
//
// Invariants:
// - At most one spare per pool key, and none while the agent holds a free (idle keep-alive)
//   socket for that key: the next request would take that one. (Sockets busy with a request
//   do not count: the next request needs a connection of its own.)
// - A spare never throws: an error, a close, no connection within the connect timeout or no
//   use within the idle bound destroys it and drops it; the request that would have used it
//   makes its own connection as before.
// - A spare on which the server sent anything before our request (a 408 of a server that
//   times out connections without a request, say) is never handed over: those bytes would be
//   read as the job's response. Node guards idle keep-alive sockets the same way.
// - A spare is built with the options the agent would build for a request to the same URL
//   (addRequest's normalisation); when they differ in some detail the keys differ, the spare is
//   not used and expires. Nothing is ever sent on a spare before a request takes it.
import type { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP, type Socket } from 'node:net';

/** The parts of node's Agent that the documented API leaves out, as node 24 has them. */
interface AgentInternals {
  readonly options: Record<string, unknown>;
  readonly defaultPort: number;
  readonly keepAlive: boolean;
  readonly keepAliveMsecs: number;
  readonly freeSockets: Readonly<Record<string, readonly Socket[] | undefined>>;
  getName(options: Record<string, unknown>): string;
  createConnection(options: Record<string, unknown>, cb?: (err: Error | null, socket: Socket) => void): Socket | undefined;
}

export interface Preconnecting {
  /**
   * Opens a spare connection to `url`'s origin unless the agent holds an idle one. `connectMs`
   * bounds the handshake, `idleMs` how long an unused spare is kept.
   */
  preconnect(url: URL, connectMs: number, idleMs: number): void;
  /** Spare connections not taken by a request yet (tests). */
  spareCount(): number;
}

/** Sockets made as spares whose handshake (TCP, and TLS for https) is over. */
const handshaken = new WeakSet<Socket>();

/** Whether `socket` was made as a spare and is connected (no connect to wait for). */
export function preconnected(socket: Socket): boolean {
  return handshaken.has(socket);
}

interface Spare {
  readonly socket: Socket;
  /** Removes this module's listeners and timeout: the socket is the agent's from then on. */
  readonly release: () => void;
}

/** `agent` (an http or https Agent), extended in place with preconnect(). */
export function preconnecting<A extends HttpAgent>(agent: A): A & Preconnecting {
  const a = agent as unknown as AgentInternals;
  const tls = agent instanceof HttpsAgent;
  const spares = new Map<string, Spare>();
  const make = a.createConnection.bind(a);

  a.createConnection = (options, cb) => {
    const key = options['_agentKey'];
    const spare = typeof key === 'string' ? spares.get(key) : undefined;
    if (spare !== undefined && typeof key === 'string') {
      spares.delete(key);
      spare.release();
      const s = spare.socket;
      if (!s.destroyed && !s.readableEnded && s.readableLength === 0) return s;
      s.on('error', () => {});
      s.destroy();
    }
    return make(options, cb);
  };

  const open = (key: string, options: Record<string, unknown>, connectMs: number, idleMs: number): void => {
    let socket: Socket | undefined;
    try {
      socket = make(options);
    } catch {
      return; // an unusable URL: the request will say why
    }
    if (socket === undefined) return;
    const s = socket;
    const drop = (): void => {
      if (spares.get(key)?.socket !== s) return;
      spares.delete(key);
      release();
      s.on('error', () => {}); // destroy() may still report the connect's failure
      s.destroy();
    };
    // Connecting: the connect bound; connected: the idle bound, until a request takes it.
    const connected = (): void => {
      handshaken.add(s);
      s.setTimeout(idleMs);
    };
    const release = (): void => {
      s.off('error', drop).off('close', drop).off('timeout', drop).off(tls ? 'secureConnect' : 'connect', connected);
      s.setTimeout(0);
    };
    spares.set(key, { socket: s, release });
    s.on('error', drop).on('close', drop).on('timeout', drop).once(tls ? 'secureConnect' : 'connect', connected);
    s.setTimeout(connectMs);
  };

  const ext: Preconnecting = {
    preconnect(url: URL, connectMs: number, idleMs: number): void {
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      // As addRequest: the agent's options over the request's, and normalizeServerName's
      // server name (the host, or '' for an address).
      const options: Record<string, unknown> = { host, port: Number(url.port) || a.defaultPort, ...a.options };
      if (tls) options['servername'] = isIP(host) === 0 ? host : '';
      const key = a.getName(options);
      if (spares.has(key) || (a.freeSockets[key]?.length ?? 0) > 0) return;
      options['_agentKey'] = key;
      options['encoding'] = null;
      if (a.keepAlive) {
        options['keepAlive'] = true;
        options['keepAliveInitialDelay'] = a.keepAliveMsecs;
      }
      open(key, options, connectMs, idleMs);
    },
    spareCount: () => spares.size,
  };
  return Object.assign(agent, ext);
}
