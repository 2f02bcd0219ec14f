// The client when connections fail (doc/client.md "Reconnection and errors"): reads re-sent
// after a reconnect, a write whose answer was lost failing with maybe_applied (never re-sent),
// several addresses tried in order, timeouts and AbortSignal per call, and a real daemon
// restarted under a pipelined load where every call settles.
import { expect } from 'chai';
import { createServer, type Server, type Socket } from 'node:net';
import { AbortError, connect, MaybeAppliedError, TickdError, TimeoutError, type Client } from '../../lib/client/index.ts';
import { Daemon } from '../helpers/daemon.ts';
import { freePort } from '../helpers/nats.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/client.ts';

const FAR = 1893466800000000000n;

/** A fake daemon: `onLine` decides what each connection's lines get. */
async function fakeServer(onLine: (line: string, sock: Socket, n: number) => void): Promise<{ server: Server; port: number; connections: number }> {
  const state = { server: createServer(), port: 0, connections: 0 };
  state.server.on('connection', (sock) => {
    const n = ++state.connections;
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('error', () => {});
    sock.on('data', (chunk: string) => {
      buf += chunk;
      for (let i = buf.indexOf('\n'); i !== -1; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        onLine(line, sock, n);
      }
    });
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.port = (state.server.address() as { port: number }).port;
  return state;
}

describe('client: reconnection, timeouts, abort', function () {
  this.timeout(60_000);
  const clients: Client[] = [];
  afterEach(() => { for (const c of clients.splice(0)) c.destroy(); });

  it('a lost connection: the pending read is re-sent on the next, the pending write fails with maybe_applied', async () => {
    const fake = await fakeServer((line, sock, n) => {
      const [rid, cmd] = line.split(' ');
      if (n === 1 && cmd === 'SET') sock.destroy(); // the SET's answer is lost
      else if (cmd === 'GET') sock.write(`${rid} OK planned 5\n`);
      else if (cmd === 'SET') sock.write(`${rid} OK\n`);
    });
    try {
      const c = await connect({ addresses: `127.0.0.1:${fake.port}`, retryStrategy: () => 10 });
      clients.push(c);
      const events: string[] = [];
      for (const e of ['close', 'reconnecting', 'connect', 'ready']) c.on(e, () => events.push(e));
      c.on('error', () => events.push('error'));
      const set = c.set('j', FAR);
      const get = c.get('j');
      const err = await set.catch((e: unknown) => e);
      expect(err).to.be.instanceOf(MaybeAppliedError);
      expect(err).to.include({ code: 'maybe_applied', maybeApplied: true });
      expect((err as Error).message).to.match(/lost before the answer to SET: it may have been applied/);
      expect(await get).to.deep.equal({ id: 'j', status: 'planned', execution: 5n });
      expect(fake.connections).to.equal(2);
      expect(events).to.deep.equal(['close', 'error', 'reconnecting', 'connect', 'ready']);
    } finally {
      fake.server.close();
    }
  });

  it('two addresses, the first down: the second serves', async () => {
    const daemon = await Daemon.start();
    try {
      const down = await freePort();
      const c = await connect({ addresses: [`127.0.0.1:${down}`, `${daemon.tcp.host}:${daemon.tcp.port}`] });
      clients.push(c);
      expect(c.endpoint?.port).to.equal(daemon.tcp.port);
      await c.set('two.a', FAR);
      expect((await c.get('two.a'))?.execution).to.equal(FAR);
      const none = await connect({ addresses: [`127.0.0.1:${down}`] }).catch((e: unknown) => e);
      expect(none).to.include({ code: 'connection' });
      expect((none as Error).message).to.match(/^cannot connect to 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
      await c.close();
    } finally {
      await daemon.stop();
    }
  });

  it('timeout and abort: per call, the write flagged as maybe applied once sent', async () => {
    const fake = await fakeServer(() => {}); // never answers
    try {
      const c = await connect({ addresses: `127.0.0.1:${fake.port}` });
      clients.push(c);
      const read = await c.get('x', { timeout: 100 }).catch((e: unknown) => e);
      expect(read).to.be.instanceOf(TimeoutError);
      expect(read).to.include({ code: 'timeout', maybeApplied: false });
      const write = await c.set('x', FAR, { timeout: 100 }).catch((e: unknown) => e);
      expect(write).to.include({ code: 'timeout', maybeApplied: true });
      const ac = new AbortController();
      const aborted = c.remove('x', { signal: ac.signal, timeout: 0 });
      setTimeout(() => ac.abort(new Error('shutting down')), 50);
      const e = await aborted.catch((x: unknown) => x);
      expect(e).to.be.instanceOf(AbortError);
      expect(e).to.include({ code: 'aborted' });
      expect((e as Error).cause).to.be.instanceOf(Error);
      expect(await c.get('x', { signal: AbortSignal.abort() }).catch((x: unknown) => x)).to.include({ code: 'aborted', maybeApplied: false });
      const listing = c.listJobs('', { timeout: 100 });
      expect(await listing.next().catch((x: unknown) => x)).to.include({ code: 'timeout' });
    } finally {
      fake.server.close();
    }
  });

  it('a daemon restarted under a pipelined load: every call settles, reads succeed, writes succeed or say maybe_applied', async () => {
    const port = await freePort();
    const dir = tempDir();
    const config = { controller: { listen: `127.0.0.1:${port}` }, database: { persistence: 'logfile' } };
    let daemon = await Daemon.start({ dir, config });
    const c = await connect({ addresses: `127.0.0.1:${port}`, timeout: 20_000, retryStrategy: () => 50 });
    clients.push(c);
    c.on('error', () => {});
    const readies: number[] = [];
    c.on('ready', () => readies.push(Date.now()));
    const calls: Array<{ write: boolean; p: Promise<unknown> }> = [];
    let stop = false;
    const track = (write: boolean, p: Promise<unknown>) => {
      p.catch(() => {}); // read once everything settled, below
      calls.push({ write, p });
    };
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        track(true, c.set(`load.${i % 1000}`, FAR + BigInt(i)));
        track(false, c.get(`load.${i % 1000}`));
        if (i % 200 === 0) await new Promise((r) => setImmediate(r));
      }
    })();
    await waitFor(() => calls.length > 20_000, 10_000, 'load under way');
    await daemon.kill();
    daemon = await Daemon.start({ dir, config });
    await waitFor(() => readies.length >= 1, 15_000, 'reconnected');
    await waitFor(() => calls.length > 60_000, 10_000, 'load after the restart');
    stop = true;
    await load;
    const settled = await Promise.race([
      Promise.allSettled(calls.map((x) => x.p)),
      new Promise<'hung'>((r) => setTimeout(() => r('hung'), 25_000)),
    ]);
    expect(settled).to.not.equal('hung');
    const results = settled as PromiseSettledResult<unknown>[];
    let maybe = 0;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') return;
      expect(r.reason).to.be.instanceOf(TickdError);
      expect(calls[i]!.write, `read ${i} failed: ${(r.reason as Error).message}`).to.equal(true);
      expect(r.reason).to.include({ code: 'maybe_applied' });
      maybe++;
    });
    expect(maybe).to.be.at.most(4096); // at most what was in flight (maxInflight) when it died
    expect(c.status).to.equal('ready');
    await c.set('after.restart', FAR);
    expect((await c.get('after.restart'))?.execution).to.equal(FAR);
    await c.close();
    await daemon.stop();
  });
});
