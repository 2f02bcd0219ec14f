import { expect } from 'chai';
import { outcomeSucceeded, type AttemptOutcome } from '../../../lib/domain/attempt.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createClient } from 'redis';
import type { RedisCommand } from '../../../lib/domain/runner-spec.ts';
import { parseRedisUrl } from '../../../lib/domain/runner-validate.ts';
import { parseRedisTarget, runRedis } from '../../../lib/runner/redis.ts';
import { canConnect, requireService } from '../../helpers/services.ts';
import { executionKey } from '../../../lib/runner/execution-key.ts';
import { capturingContext, EXECUTION_NS, makeExecution, neverAborted, waitFor } from '../../helpers/runner-context.ts';

const HOST = '127.0.0.1';
const PORT = 6379;
const BASE = `redis://${HOST}:${PORT}`;

function run(url: string, command: RedisCommand, key: string, opts: { timeoutMs?: number; jobId?: string } = {}) {
  const { ctx, lines } = capturingContext(opts.timeoutMs ?? 5000);
  const spec = { type: 'redis' as const, url, command, key };
  const outcome = runRedis(makeExecution(spec, opts.jobId), spec, ctx, neverAborted());
  return { result: outcome.then(outcomeSucceeded), outcome, lines };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('runner/redis: URL parsing', () => {
  it('reads host, port, credentials and db', () => {
    expect(parseRedisTarget('redis://u%40x:p%3Aw@h.example:7000/12')).to.deep.equal({
      ok: true, target: { host: 'h.example', port: 7000, username: 'u@x', password: 'p:w', database: 12 },
    });
    expect(parseRedisTarget('redis://:pw@[::1]')).to.deep.equal({ ok: true, target: { host: '::1', port: 6379, username: undefined, password: 'pw', database: 0 } });
    expect(parseRedisTarget('redis://h/')).to.deep.include({ ok: true });
  });

  it('rejects garbage, other schemes and bad databases', () => {
    for (const bad of ['', 'nonsense', 'rediss://h', 'http://h', 'redis://h/x', 'redis://h/1/2', 'redis://h/-1', 'redis://h:99999', 'redis:///0', 'redis://%zz@h']) {
      expect(parseRedisTarget(bad).ok, bad).to.equal(false);
    }
  });

  it('rejects what RULE SET rejects: a query (node-redis would read ?db=), leading blanks (same parser)', () => {
    for (const bad of ['redis://h?db=1', 'redis://h/#x', ' redis://h', 'redis://h/99999999999']) {
      const r = parseRedisTarget(bad);
      expect(r.ok, bad).to.equal(false);
      expect(r.ok === false && r.error, bad).to.equal(parseRedisUrl(bad));
    }
    expect(parseRedisTarget('redis://h/2147483647')).to.nested.include({ 'target.database': 2147483647 });
  });
});

/** Parses complete RESP arrays of bulk strings from `buf`; returns them and the unread rest. */
function parseCommands(buf: Buffer): { commands: string[][]; rest: Buffer } {
  const commands: string[][] = [];
  let at = 0;
  for (;;) {
    const start = at;
    const line = (): string | undefined => {
      const end = buf.indexOf('\r\n', at);
      if (end < 0) return undefined;
      const text = buf.subarray(at, end).toString('latin1');
      at = end + 2;
      return text;
    };
    const header = line();
    if (header === undefined) return { commands, rest: buf.subarray(start) };
    const count = Number(header.slice(1));
    const args: string[] = [];
    for (let i = 0; i < count; i++) {
      const len = line();
      if (len === undefined || buf.length < at + Number(len.slice(1)) + 2) return { commands, rest: buf.subarray(start) };
      args.push(buf.subarray(at, at + Number(len.slice(1))).toString('utf8'));
      at += Number(len.slice(1)) + 2;
    }
    commands.push(args);
  }
}

/** A fake RESP server that records the commands of each connection and answers +OK / :1, and MULTI/EXEC. */
async function recordingServer(): Promise<{ port: number; connections: string[][][]; close: () => Promise<void> }> {
  const connections: string[][][] = [];
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    const seen: string[][] = [];
    connections.push(seen);
    let pending: Buffer = Buffer.alloc(0);
    let queued: string[] | null = null;
    socket.on('data', (chunk: Buffer) => {
      const { commands, rest } = parseCommands(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const cmd of commands) {
        seen.push(cmd);
        const reply = cmd[0] === 'AUTH' || cmd[0] === 'SELECT' || cmd[0] === 'SET' || cmd[0] === 'LTRIM' ? '+OK\r\n' : ':1\r\n';
        if (cmd[0] === 'MULTI') {
          queued = [];
          socket.write('+OK\r\n');
        } else if (cmd[0] === 'EXEC' && queued !== null) {
          socket.write(`*${queued.length}\r\n${queued.join('')}`);
          queued = null;
        } else if (queued !== null) {
          queued.push(reply);
          socket.write('+QUEUED\r\n');
        } else {
          socket.write(reply);
        }
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('runner/redis: the exact commands sent (fake RESP server)', () => {
  it('sends AUTH in one- or two-argument form and SELECT as the URL says, then the command in a transaction with its companion', async () => {
    const fake = await recordingServer();
    const record = `{"job_id":"job.test.1","execution":${EXECUTION_NS},"attempt":1,"execution_key":"${executionKey('job.test.1', EXECUTION_NS, 1)}"}`;
    const sent = [['MULTI'], ['RPUSH', 'q', 'job.test.1'], ['RPUSH', 'q:tickd', record], ['LTRIM', 'q:tickd', '-10000', '-1'], ['EXEC']];
    try {
      const cases: [string, string[][]][] = [
        [`redis://${HOST}:${fake.port}`, sent],
        [`redis://${HOST}:${fake.port}/0`, sent],
        [`redis://:s%40cret@${HOST}:${fake.port}/5`, [['AUTH', 's@cret'], ['SELECT', '5'], ...sent]],
        [`redis://alice:pw@${HOST}:${fake.port}`, [['AUTH', 'alice', 'pw'], ...sent]],
        [`redis://alice@${HOST}:${fake.port}/1`, [['AUTH', 'alice', ''], ['SELECT', '1'], ...sent]],
      ];
      for (const [url, expected] of cases) {
        expect(await run(url, 'RPUSH', 'q').result, url).to.equal(true);
        expect(fake.connections.at(-1), url).to.deep.equal(expected);
      }
      expect(fake.connections).to.have.length(cases.length); // one connection per execution
    } finally {
      await fake.close();
    }
  });
});

describe('runner/redis (real Redis)', function () {
  this.timeout(20000);
  const prefix = `tickd-test:${randomBytes(6).toString('hex')}:`;
  let admin: ReturnType<typeof createClient>;
  const users: string[] = [];

  before(async function () {
    await requireService(this, 'redis', HOST, PORT);
    admin = createClient({ url: BASE });
    admin.on('error', () => {});
    await admin.connect();
  });

  after(async () => {
    if (!admin) return;
    for (const db of [0, 3]) {
      await admin.select(db);
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(keys);
    }
    for (const user of users) await admin.sendCommand(['ACL', 'DELUSER', user]);
    admin.destroy();
  });

  it('PUBLISH delivers the job id to a subscriber', async () => {
    const channel = `${prefix}chan`;
    const subscriber = admin.duplicate();
    subscriber.on('error', () => {});
    await subscriber.connect();
    const received: string[] = [];
    await subscriber.subscribe(channel, (message) => { received.push(message); });
    try {
      expect(await run(BASE, 'PUBLISH', channel, { jobId: 'pub.job.1' }).result).to.equal(true);
      await waitFor(() => received.length === 1, 5000, 'the published message');
      expect(received).to.deep.equal(['pub.job.1']);
    } finally {
      subscriber.destroy();
    }
  });

  it('RPUSH and LPUSH append to the list; SET sets the key', async () => {
    await admin.select(0);
    expect(await run(BASE, 'RPUSH', `${prefix}list`, { jobId: 'a' }).result).to.equal(true);
    expect(await run(BASE, 'RPUSH', `${prefix}list`, { jobId: 'b' }).result).to.equal(true);
    expect(await run(BASE, 'LPUSH', `${prefix}list`, { jobId: 'c' }).result).to.equal(true);
    expect(await admin.lRange(`${prefix}list`, 0, -1)).to.deep.equal(['c', 'a', 'b']);
    expect(await run(`${BASE}/0`, 'SET', `${prefix}str`, { jobId: 'set.job' }).result).to.equal(true);
    expect(await admin.get(`${prefix}str`)).to.equal('set.job');
  });

  it('selects the database given in the URL', async () => {
    const key = `${prefix}db3`;
    expect(await run(`${BASE}/3`, 'SET', key, { jobId: 'in.db.3' }).result).to.equal(true);
    await admin.select(0);
    expect(await admin.get(key)).to.equal(null);
    await admin.select(3);
    expect(await admin.get(key)).to.equal('in.db.3');
    await admin.select(0);
  });

  it('authenticates with user and password (two-argument AUTH); a wrong password fails; no log line holds it', async () => {
    const user = `tickd-test-${randomBytes(4).toString('hex')}`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    await admin.sendCommand(['ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all']);
    users.push(user);
    await admin.select(0);

    const good = run(`redis://${user}:${password}@${HOST}:${PORT}/0`, 'RPUSH', `${prefix}auth`, { jobId: 'authed' });
    expect(await good.result).to.equal(true);
    expect(await admin.lRange(`${prefix}auth`, 0, -1)).to.deep.equal(['authed']);

    const wrong = run(`redis://${user}:not-${password}@${HOST}:${PORT}/0`, 'RPUSH', `${prefix}auth`);
    expect(await wrong.result).to.equal(false);
    const refused = await wrong.outcome;
    expect(refused.kind).to.equal('broker_error');
    expect((refused as { error: string }).error).to.include('WRONGPASS').and.not.include(password);
    expect(await good.outcome).to.deep.equal({ kind: 'delivered' });
    expect(await admin.lLen(`${prefix}auth`)).to.equal(1);

    const all = [...good.lines, ...wrong.lines].join('\n');
    expect(wrong.lines.length).to.be.above(0);
    expect(all).to.include('***@');
    expect(all).to.not.include(password);
  });

  it('fails on a RESP error reply (WRONGTYPE)', async () => {
    await admin.select(0);
    await admin.set(`${prefix}wrongtype`, 'a string');
    const { result, outcome, lines } = run(BASE, 'RPUSH', `${prefix}wrongtype`);
    expect(await result).to.equal(false);
    expect(lines.join('\n')).to.include('WRONGTYPE');
    expect((await outcome as { error: string }).error).to.match(/^WRONGTYPE /);
  });

  it('fails fast on connection refused, an unparsable URL, rediss:// or an unknown command', async () => {
    const port = await freePort();
    const started = Date.now();
    expect(await run(`redis://${HOST}:${port}`, 'SET', `${prefix}x`).result).to.equal(false);
    expect(Date.now() - started).to.be.below(2000);
    expect(await run('redis://user:pw@@', 'SET', `${prefix}x`).result).to.equal(false);
    expect(await run(`rediss://${HOST}:${PORT}`, 'SET', `${prefix}x`).result).to.equal(false);
    expect(await run(BASE, 'set' as RedisCommand, `${prefix}x`).result).to.equal(false);
    expect(await run(BASE, 'DEL' as RedisCommand, `${prefix}x`).result).to.equal(false);
    expect(await run(BASE, 'DEL' as RedisCommand, `${prefix}x`).outcome).to.deep.equal({ kind: 'runner_error', error: 'unsupported redis command "DEL"' });
    expect((await run(`redis://${HOST}:${port}`, 'SET', `${prefix}x`).outcome).kind).to.equal('broker_error');
    expect(await admin.exists(`${prefix}x`)).to.equal(0);
  });

  it('fails after the timeout against a server that accepts and never answers', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => { sockets.push(s); });
    await new Promise<void>((resolve) => silent.listen(0, HOST, resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const started = Date.now();
      expect(await run(`redis://${HOST}:${port}`, 'SET', 'k', { timeoutMs: 300 }).result).to.equal(false);
      expect(Date.now() - started).to.be.below(3000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('runner/redis one-argument AUTH (private redis-server with requirepass)', function () {
  this.timeout(20000);
  let server: ChildProcess | undefined;
  let port = 0;
  const password = `req-${randomBytes(8).toString('hex')}`;

  before(async function () {
    port = await freePort();
    server = spawn('redis-server', ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--requirepass', password], { stdio: 'ignore' });
    const spawnFailed = new Promise<boolean>((resolve) => server!.once('error', () => resolve(true)));
    const up = (async () => { await waitFor(() => canConnect(HOST, port, 200), 5000, 'redis-server'); return false; })();
    if (await Promise.race([spawnFailed, up]).catch(() => true)) {
      server = undefined;
      if (process.env.CI === 'true') throw new Error('redis-server could not be started (required under CI=true)');
      process.stderr.write('      skipped: no redis-server binary to start a private server\n');
      this.skip();
    }
  });

  after(() => { server?.kill('SIGKILL'); });

  it('authenticates with the password alone; a wrong one fails', async () => {
    const good = run(`redis://:${password}@${HOST}:${port}/2`, 'SET', 'k', { jobId: 'one.arg' });
    expect(await good.result).to.equal(true);
    const check = createClient({ url: `redis://:${password}@${HOST}:${port}/2` });
    check.on('error', () => {});
    await check.connect();
    expect(await check.get('k')).to.equal('one.arg');
    check.destroy();
    const bad = run(`redis://:wrong@${HOST}:${port}`, 'SET', 'k2');
    expect(await bad.result).to.equal(false);
    const none = run(`redis://${HOST}:${port}`, 'SET', 'k3');
    expect(await none.result).to.equal(false);
    expect([...good.lines, ...bad.lines].join('\n')).to.not.include(password);
  });
});
