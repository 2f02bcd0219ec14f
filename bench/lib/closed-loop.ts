// Closed-loop protocol load: each of N connections sends one SET (or `depth` SETs), then
// one more for each reply, until stopped. With fsync_on_persist every reply waits for an
// fsync, so the rate shows how many writers share one (group commit). Ids: `<prefix>.<connection>.<n>`,
// all due in 2096. Reply lines carrying ERROR are counted apart.
import { connect, type Socket } from 'node:net';
import type { Address } from '../../test/helpers/daemon.ts';
import { FAR_FUTURE_NS } from './pipeline.ts';

export interface ClosedLoop {
  /** Replies so far (OK and ERROR). */
  readonly replies: number;
  readonly errors: number;
  /** Stops sending, waits for the replies still due, closes the connections. */
  stop(): Promise<void>;
}

export async function closedLoopSets(addr: Address, connections: number, prefix: string, depth = 1): Promise<ClosedLoop> {
  let replies = 0;
  let errors = 0;
  let running = true;
  let socketError: Error | null = null;
  const finished: Array<Promise<void>> = [];
  const sockets: Socket[] = [];
  await Promise.all(Array.from({ length: connections }, (_, c) => new Promise<void>((connected, failed) => {
    const socket = connect(addr.port, addr.host);
    sockets.push(socket);
    let n = 0; // replies received on this connection
    let sent = 0;
    let buffered = '';
    const send = (): void => { socket.write(`${sent} SET ${prefix}.${c}.${sent} ${FAR_FUTURE_NS + BigInt(sent)}\n`); sent++; };
    const done = Promise.withResolvers<void>();
    finished.push(done.promise);
    socket.setEncoding('utf8');
    socket.once('error', (err) => { socketError ??= err; failed(err); done.resolve(); });
    socket.on('close', () => done.resolve());
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let i;
      while ((i = buffered.indexOf('\n')) >= 0) {
        if (buffered.startsWith(`${n} ERROR`)) errors++;
        buffered = buffered.slice(i + 1);
        replies++;
        n++;
        if (running) send();
        else if (n === sent) socket.destroy();
      }
    });
    socket.once('connect', () => { for (let k = 0; k < depth; k++) send(); connected(); });
  })));
  return {
    get replies() { return replies; },
    get errors() { return errors; },
    async stop() {
      running = false;
      const timer = setTimeout(() => { for (const s of sockets) s.destroy(); }, 10_000);
      await Promise.all(finished);
      clearTimeout(timer);
      if (socketError !== null) throw socketError;
    },
  };
}
