import { expect } from 'chai';
import { outcomeSucceeded, type AttemptOutcome } from '../../../lib/domain/attempt.ts';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { unescape as qsUnescape } from 'node:querystring';
import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { parseAmqpDsn } from '../../../lib/domain/runner-validate.ts';
import { parseAmqpTarget, runAmqp } from '../../../lib/runner/amqp.ts';
import { requireService } from '../../helpers/services.ts';
import { executionKey } from '../../../lib/runner/execution-key.ts';
import { capturingContext, EXECUTION_NS, makeExecution, neverAborted, waitFor } from '../../helpers/runner-context.ts';

const HOST = '127.0.0.1';
const PORT = 5672;
const BASE = `amqp://${HOST}:${PORT}`;

function run(dsn: string, exchange: string, routingKey: string, opts: { timeoutMs?: number; jobId?: string; signal?: AbortSignal } = {}) {
  const { ctx, lines } = capturingContext(opts.timeoutMs ?? 5000);
  const spec = { type: 'amqp' as const, dsn, exchange, routing_key: routingKey };
  const outcome = runAmqp(makeExecution(spec, opts.jobId), spec, ctx, opts.signal ?? neverAborted());
  return { result: outcome.then(outcomeSucceeded), outcome, lines };
}

describe('runner/amqp: DSN parsing', () => {
  it('defaults to guest:guest, port 5672 and vhost /', () => {
    expect(parseAmqpTarget('amqp://h')).to.deep.equal({ ok: true, target: { hostname: 'h', port: 5672, username: 'guest', password: 'guest', vhost: '/', vhostEncoded: '%2F' } });
    expect(parseAmqpTarget('amqp://h/')).to.deep.include({ ok: true });
  });

  it('decodes userinfo and the vhost', () => {
    expect(parseAmqpTarget('amqp://u%40x:p%2Fw@[::1]:5673/my%2Fvhost')).to.deep.equal({
      ok: true, target: { hostname: '::1', port: 5673, username: 'u@x', password: 'p/w', vhost: 'my/vhost', vhostEncoded: 'my%2Fvhost' },
    });
    expect(parseAmqpTarget('amqp://u@h/%2F')).to.deep.equal({ ok: true, target: { hostname: 'h', port: 5672, username: 'u', password: '', vhost: '/', vhostEncoded: '%2F' } });
  });

  it('keeps only userinfo that is present: a lone user or password leaves the other empty', () => {
    expect(parseAmqpTarget('amqp://:pw@h')).to.nested.include({ 'target.username': '', 'target.password': 'pw' });
    expect(parseAmqpTarget('amqp://:@h')).to.nested.include({ 'target.username': 'guest', 'target.password': 'guest' });
  });

  it('hands amqplib a vhost that its unescape turns back into the decoded name', () => {
    for (const [dsn, vhost] of [['amqp://h/a%25b', 'a%b'], ['amqp://h/a%20b', 'a b'], ['amqp://h/%C3%A9', 'é'], ['amqp://h/%2f', '/'], ['amqp://h/x+y', 'x+y']]) {
      const r = parseAmqpTarget(dsn!);
      if (!r.ok) throw new Error(`${dsn}: ${r.error}`);
      expect(r.target.vhost, dsn).to.equal(vhost);
      expect(qsUnescape(r.target.vhostEncoded), dsn).to.equal(vhost);
    }
  });

  it('rejects amqps://, other schemes and garbage', () => {
    for (const bad of ['', 'garbage', 'amqps://h', 'http://h', 'amqp://', 'amqp://h:0', 'amqp://h/a/b', 'amqp://h/%zz', 'amqp://%zz@h']) {
      expect(parseAmqpTarget(bad).ok, bad).to.equal(false);
    }
  });

  it('rejects what RULE SET rejects: a query, a fragment, leading blanks (same parser)', () => {
    for (const bad of ['amqp://h/?heartbeat=5', 'amqp://h#x', ' amqp://h', '\tamqp://h']) {
      const r = parseAmqpTarget(bad);
      expect(r.ok, bad).to.equal(false);
      expect(r.ok === false && r.error, bad).to.equal(parseAmqpDsn(bad));
    }
  });
});

describe('runner/amqp (real RabbitMQ)', function () {
  this.timeout(20000);
  const tag = randomBytes(6).toString('hex');
  const exchange = `tickd-test-${tag}`;
  let model: ChannelModel;
  let channel: Channel;
  let queue: string;
  const received: ConsumeMessage[] = [];

  before(async function () {
    await requireService(this, 'rabbitmq', HOST, PORT);
    model = await connect(BASE);
    model.on('error', () => {});
    channel = await model.createChannel();
    channel.on('error', () => {});
    await channel.assertExchange(exchange, 'direct', { durable: false, autoDelete: true });
    ({ queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true }));
    await channel.bindQueue(queue, exchange, 'jobs.due');
    await channel.consume(queue, (msg) => { if (msg) received.push(msg); }, { noAck: true });
  });

  after(async () => {
    if (!model) return;
    await channel.deleteExchange(exchange).catch(() => {});
    await model.close().catch(() => {});
  });

  it('publishes one message whose body is the job id, with default credentials', async () => {
    const before = received.length;
    expect(await run(BASE, exchange, 'jobs.due', { jobId: 'amqp.job.1' }).result).to.equal(true);
    await waitFor(() => received.length === before + 1, 5000, 'the message');
    const msg = received.at(-1)!;
    expect(msg.content.toString('utf8')).to.equal('amqp.job.1');
    expect(msg.fields.exchange).to.equal(exchange);
    expect(msg.fields.routingKey).to.equal('jobs.due');
  });

  it('sets the message id to the execution key and the headers tickd-job and tickd-attempt (1 when the execution has no number)', async () => {
    const before = received.length;
    const { ctx } = capturingContext();
    const spec = { type: 'amqp' as const, dsn: BASE, exchange, routing_key: 'jobs.due' };
    expect(await runAmqp(makeExecution(spec, 'amqp.keys'), spec, ctx, neverAborted())).to.deep.equal({ kind: 'delivered' });
    expect(await runAmqp({ ...makeExecution(spec, 'amqp.keys'), attemptNo: 3 }, spec, ctx, neverAborted())).to.deep.equal({ kind: 'delivered' });
    await waitFor(() => received.length === before + 2, 5000, 'both messages');
    const got = received.slice(before);
    expect(got.map((m) => m.properties.messageId)).to.deep.equal([executionKey('amqp.keys', EXECUTION_NS, 1), executionKey('amqp.keys', EXECUTION_NS, 3)]);
    expect(got.map((m) => m.properties.headers)).to.deep.equal([{ 'tickd-job': 'amqp.keys', 'tickd-attempt': 1 }, { 'tickd-job': 'amqp.keys', 'tickd-attempt': 3 }]);
    expect(got.map((m) => m.content.toString('utf8'))).to.deep.equal(['amqp.keys', 'amqp.keys']);
  });

  it('accepts explicit credentials and the default vhost spelled %2F', async () => {
    const before = received.length;
    expect(await run(`amqp://guest:guest@${HOST}:${PORT}/%2F`, exchange, 'jobs.due', { jobId: 'amqp.job.2' }).result).to.equal(true);
    await waitFor(() => received.length === before + 1, 5000, 'the message');
    expect(received.at(-1)!.content.toString('utf8')).to.equal('amqp.job.2');
  });

  it('succeeds on a confirmed but unroutable message (the broker confirmed it)', async () => {
    expect(await run(BASE, exchange, 'nobody.listens').result).to.equal(true);
    expect(await run(BASE, exchange, 'nobody.listens').outcome).to.deep.equal({ kind: 'delivered' });
  });

  it('fails on rejected credentials without leaking the password to logs', async () => {
    const secret = `wrong-${tag}`;
    const { result, outcome, lines } = run(`amqp://guest:${secret}@${HOST}:${PORT}`, exchange, 'jobs.due');
    expect(await result).to.equal(false);
    expect((await outcome).kind).to.equal('broker_error');
    expect(JSON.stringify(await outcome)).to.not.include(secret);
    expect(lines.length).to.be.above(0);
    expect(lines.join('\n')).to.include('***@');
    expect(lines.join('\n')).to.not.include(secret);
  });

  it('fails on a missing exchange (the broker closes the channel with 404)', async () => {
    const { result, outcome, lines } = run(BASE, `tickd-test-missing-${tag}`, 'x');
    expect(await result).to.equal(false);
    expect(lines.join('\n')).to.include('404');
    const o = await outcome;
    expect(o.kind).to.equal('broker_error');
    expect((o as { error: string }).error).to.include('404').and.include('NOT_FOUND');
  });

  it('fails on a missing vhost', async () => {
    expect(await run(`${BASE}/tickd-no-such-vhost-${tag}`, exchange, 'jobs.due').result).to.equal(false);
  });

  it('fails on connection refused, garbage and amqps:// DSNs', async () => {
    expect(await run('amqp://127.0.0.1:1', exchange, 'jobs.due').result).to.equal(false);
    expect((await run('amqp://127.0.0.1:1', exchange, 'jobs.due').outcome)).to.deep.include({ kind: 'broker_error' });
    expect((await run(`amqps://${HOST}:${PORT}`, exchange, 'jobs.due').outcome).kind).to.equal('runner_error');
    expect(await run('garbage', exchange, 'jobs.due').result).to.equal(false);
    expect(await run('amqp://user:pw@@/%zz', exchange, 'jobs.due').result).to.equal(false);
    expect(await run(`amqps://${HOST}:${PORT}`, exchange, 'jobs.due').result).to.equal(false);
  });

  it('fails after the timeout against a server that accepts and never answers', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((s) => { sockets.push(s); });
    await new Promise<void>((resolve) => silent.listen(0, HOST, resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const started = Date.now();
      expect(await run(`amqp://${HOST}:${port}`, exchange, 'x', { timeoutMs: 300 }).outcome).to.deep.include({ kind: 'broker_error' });
      expect(Date.now() - started).to.be.below(3000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('aborting ends the attempt as failure', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await run(BASE, exchange, 'jobs.due', { signal: controller.signal }).result).to.equal(false);
    expect(await run(BASE, exchange, 'jobs.due', { signal: controller.signal }).outcome).to.deep.equal({ kind: 'aborted' });
  });

  it('still works after all those failures (no crash, no leaked state)', async () => {
    const before = received.length;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => run(BASE, exchange, 'jobs.due', { jobId: `burst.${i}` }).result));
    expect(results.every((ok) => ok)).to.equal(true);
    await waitFor(() => received.length === before + 20, 5000, 'the burst');
    expect(received.slice(before).map((m) => m.content.toString()).sort()).to.deep.equal(Array.from({ length: 20 }, (_, i) => `burst.${i}`).sort());
  });
});
