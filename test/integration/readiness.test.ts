// Readiness (tickd(8) "Readiness and health") on the real daemon:
// - GET /ready answers 503 {"error":"not ready: starting"} while the daemon starts (held here by
//   stopping one of two workers before it listens: the primary waits for every worker, while
//   the other one already serves), 200 once ready, and 503 "not ready: stopping" from the
//   start of a graceful stop (a request begun before the stop and finished during the drain);
//   GET /health answers 200 throughout; neither needs a token; each answer is checked against
//   the served OpenAPI document.
// - With NOTIFY_SOCKET set (systemd's Type=notify), READY=1 reaches that socket through
//   systemd-notify(1) once the daemon is ready, and no worker inherits the variable.
// - In cluster mode (a real nats-server), leader and follower both answer 200: ready means
//   the node knows its role, and either serves clients.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/client.ts';
import { startNode, waitForLeader } from '../helpers/cluster-nodes.ts';
import { Daemon, type Address } from '../helpers/daemon.ts';
import { requireNatsServer, startNats, type NatsCluster } from '../helpers/nats.ts';
import { childrenRunning, pause } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';
import { SchemaChecker } from '../unit/http/schema-check.ts';
import { HttpApi } from './http-client.ts';

const TOKENS = fileURLToPath(new URL('../fixtures/auth/tokens.toml', import.meta.url));
const CAN_NOTIFY = spawnSync('sh', ['-c', 'command -v systemd-notify && command -v python3']).status === 0;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The primary's worker processes once `count` of them run worker.ts, polled every millisecond. */
async function workersOf(primary: number, count: number): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const workers = childrenRunning(primary, 'worker.ts');
    if (workers.length >= count) return workers;
    if (Date.now() > deadline) throw new Error(`${count} workers not seen`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** A raw connection, and its bytes as they arrive. */
async function rawConnection(addr: Address): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect({ host: addr.host, port: addr.port });
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => { text += chunk; });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => text, closed };
}

function refused(addr: Address): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: addr.host, port: addr.port });
    s.once('connect', () => { s.destroy(); resolve(false); });
    s.once('error', () => resolve(true));
  });
}

describe('readiness: GET /ready, GET /health', function () {
  this.timeout(60000);
  const daemons: Daemon[] = [];
  const held: number[] = [];
  afterEach(async () => {
    // A stopped worker ignores everything but SIGKILL: never leave one behind.
    for (const pid of held.splice(0)) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    for (const d of daemons.splice(0)) await d.kill();
  });

  it('503 "starting" while a worker is still starting (commands already served), then 200; /health 200 throughout; no token', async () => {
    const port = await freePort();
    const daemon = Daemon.spawn({
      workers: 2, args: ['--tick-slice', '0'],
      config: { controller: { auth_file: TOKENS }, http: { listen: `127.0.0.1:${port}` } },
    });
    daemons.push(daemon);
    const [, second] = await workersOf(daemon.proc.pid!, 2);
    held.push(second!);
    await pause(second!);

    const api = new HttpApi({ host: '127.0.0.1', port }, null);
    try {
      // The other worker listens: the port answers, while the primary waits for the held one.
      let doc: { status: number; body: unknown } | null = null;
      await waitFor(async () => {
        try {
          doc = await api.json('GET', '/openapi.json');
          return true;
        } catch {
          return false; // not listening yet
        }
      }, 15000, `the first worker's HTTP port; stderr:\n${daemon.stderr.join('\n')}`);
      expect(doc!.status).to.equal(200);
      api.useDocument(doc!.body);
      for (let i = 0; i < 3; i++) {
        const ready = await api.request('GET', '/ready');
        expect([ready.status, ready.text]).to.deep.equal([503, '{"error":"not ready: starting"}']);
        expect((await api.request('GET', '/health')).status).to.equal(200);
      }
      // The authentication is on: the probes need no token, the data routes do.
      expect((await api.request('GET', '/stats')).status).to.equal(401);
      expect(daemon.stderr.some((l) => l.includes('"msg":"ready"'))).to.equal(false);

      process.kill(second!, 'SIGCONT');
      held.pop();
      await daemon.waitForReady(15000);
      const seen: number[] = [];
      await waitFor(async () => {
        const ready = await api.request('GET', '/ready');
        seen.push(ready.status);
        if (ready.status === 200) expect(ready.text).to.equal('{"status":"ready"}');
        return ready.status === 200;
      }, 5000, 'GET /ready 200');
      expect(new Set(seen.slice(0, -1))).to.satisfy((s: Set<number>) => [...s].every((code) => code === 503));
      expect((await api.request('GET', '/health')).status).to.equal(200);
      expect((await api.request('HEAD', '/ready')).status).to.equal(200);
      expect(api.checked).to.be.at.least(9);
    } finally {
      api.close();
    }
  });

  it('503 "stopping" for a request the drain lets finish; the stop is still clean', async () => {
    const daemon = await Daemon.start({ workers: 1, config: { http: { listen: '127.0.0.1:0' } } });
    daemons.push(daemon);
    const http = daemon.http!;
    const api = new HttpApi(http, null);
    const doc = await api.json('GET', '/openapi.json');
    api.close();
    expect((await new HttpApi(http, null).request('GET', '/ready')).status).to.equal(200);

    // One write: a whole request, then the start of the next. Once the first is answered, the
    // worker has begun reading the second, so the drain keeps this connection open for it.
    const conn = await rawConnection(http);
    conn.socket.write('GET /health HTTP/1.1\r\nHost: t\r\n\r\nGET /ready HTTP/1.1\r\nHost: t\r\n');
    await waitFor(() => conn.received().includes('{"status":"ok"}'), 5000, 'the /health answer');

    daemon.proc.kill('SIGTERM');
    // The worker stopped accepting: it has been told to drain.
    await waitFor(() => refused(http), 5000, 'the port to close');
    conn.socket.write('\r\n');
    await conn.closed;
    const answer = conn.received().slice(conn.received().indexOf('{"status":"ok"}') + '{"status":"ok"}'.length);
    expect(answer).to.match(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(answer).to.match(/\r\nConnection: close\r\n/i);
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    expect(body).to.equal('{"error":"not ready: stopping"}');
    expect(new SchemaChecker(doc.body).check('GET', '/ready', 503, body)).to.deep.equal([]);
    expect(await daemon.exit).to.deep.equal({ code: 0, signal: null });
  });
});

describe('readiness: NOTIFY_SOCKET (systemd Type=notify)', function () {
  this.timeout(60000);
  const daemons: Daemon[] = [];
  let receiver: ChildProcess | null = null;
  before(function () {
    if (!CAN_NOTIFY) this.skip();
  });
  afterEach(async () => {
    receiver?.kill('SIGKILL');
    receiver = null;
    for (const d of daemons.splice(0)) await d.kill();
  });

  it('sends READY=1 once ready, through systemd-notify; no worker inherits NOTIFY_SOCKET', async () => {
    const socketPath = join(tempDir(), 'notify');
    // Node has no unix datagram sockets: a few lines of Python play systemd's part. recv()
    // drops systemd-notify's barrier descriptor, which releases it at once, as systemd does.
    receiver = spawn('python3', ['-u', '-c', [
      'import socket, sys',
      's = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)',
      's.bind(sys.argv[1])',
      'print("bound")',
      'while True: print(s.recv(4096).decode().replace("\\n", " "))',
    ].join('\n'), socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    let got = '';
    receiver.stdout!.setEncoding('utf8').on('data', (c: string) => { got += c; });
    await waitFor(() => got.includes('bound'), 10000, 'the receiver');

    const daemon = Daemon.spawn({ workers: 2, config: { http: { listen: '127.0.0.1:0' } }, env: { NOTIFY_SOCKET: socketPath } });
    daemons.push(daemon);
    await waitFor(() => got.includes('READY=1'), 15000, `READY=1; stderr:\n${daemon.stderr.join('\n')}`);
    // Told only once everything listens: the ready record is out and GET /ready says so.
    await daemon.waitForReady(1000);
    expect(got.split('\n').filter((l) => l.includes('READY=1'))).to.have.length(1);
    expect((await new HttpApi(daemon.http!, null).request('GET', '/ready')).status).to.equal(200);
    await daemon.waitForLog((r) => r['msg'] === 'service manager told: ready', 5000);
    for (const worker of childrenRunning(daemon.proc.pid!, 'worker.ts')) {
      expect(readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0').some((e) => e.startsWith('NOTIFY_SOCKET='))).to.equal(false);
    }
    expect(await daemon.stop()).to.deep.equal({ code: 0, signal: null });
  });

  it('a NOTIFY_SOCKET nobody listens on costs a warning, not the daemon', async () => {
    const daemon = await Daemon.start({ env: { NOTIFY_SOCKET: join(tempDir(), 'nobody') } });
    daemons.push(daemon);
    const warning = await daemon.waitForLog((r) => r['msg'] === 'systemd-notify failed: the service manager was not told that tickd is ready', 10000);
    expect(warning['level']).to.equal(40);
    expect(await daemon.stop()).to.deep.equal({ code: 0, signal: null });
  });
});

describe('readiness: GET /ready in cluster mode', function () {
  this.timeout(90000);
  let nats: NatsCluster | null = null;
  const nodes: Daemon[] = [];
  after(async () => {
    for (const d of nodes) await d.kill();
    await nats?.stop();
  });

  it('200 on the leader and on a follower alike: each knows its role and serves clients', async function () {
    nats = await startNats(requireNatsServer(this), 1);
    nodes.push(await startNode(nats, { cluster: 'ready', name: 'n1' }), await startNode(nats, { cluster: 'ready', name: 'n2' }));
    const leader = await waitForLeader(nodes);
    const follower = nodes.find((d) => d !== leader)!;
    for (const [node, role] of [[leader, 'leader'], [follower, 'follower']] as const) {
      const api = new HttpApi(node.http!, null);
      try {
        const ready = await api.request('GET', '/ready');
        expect([ready.status, ready.text], role).to.deep.equal([200, '{"status":"ready"}']);
        expect(JSON.parse((await api.request('GET', '/cluster')).text)).to.include({ role });
      } finally {
        api.close();
      }
    }
  });

  it('503 "stopping" from the stop on, while a leader hands over and its workers still accept', async function () {
    // A node alone leads; with its NATS server stopped, releasing the lease waits for NATS,
    // and the workers are drained only after that.
    const bin = requireNatsServer(this);
    const own = await startNats(bin, 1);
    try {
      const node = await startNode(own, { cluster: 'handover', name: 'solo' });
      nodes.push(node);
      await waitForLeader([node]);
      const server = own.servers[0]!.proc;
      await pause(server.pid!);
      try {
        node.proc.kill('SIGTERM');
        await node.waitForLog((r) => r['msg'] === 'stopping', 5000);
        const api = new HttpApi(node.http!, null);
        try {
          const ready = await api.request('GET', '/ready');
          expect([ready.status, ready.text]).to.deep.equal([503, '{"error":"not ready: stopping"}']);
          expect((await api.request('GET', '/health')).status).to.equal(200);
        } finally {
          api.close();
        }
        expect(node.proc.exitCode, 'still handing over').to.equal(null);
      } finally {
        server.kill('SIGCONT');
      }
      expect(await node.exit).to.deep.equal({ code: 0, signal: null });
    } finally {
      await own.stop();
    }
  });
});
