// Remote runners fired by the real daemon (the runner modules have their own detailed tests in
// test/unit/runner): the whole path rule -> due job -> runner -> service -> job status.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { connect as amqpConnect } from 'amqplib';
import { createClient } from 'redis';
import { Daemon } from '../helpers/daemon.ts';
import { jobStatus, LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { requireService } from '../helpers/services.ts';
import { tempDir } from '../helpers/tmp.ts';


describe('remote runners through the daemon', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let c: LineClient;
  const binDir = tempDir();
  const awfLog = join(binDir, 'awf.argv');
  before(async () => {
    // A fake `awf` first on the daemon's PATH records its argv.
    writeFileSync(join(binDir, 'awf'), `#!/bin/sh\nprintf '%s\\n' "$@" > ${awfLog}\n`);
    chmodSync(join(binDir, 'awf'), 0o755);
    daemon = await Daemon.start({ env: { PATH: `${binDir}:${process.env['PATH']}`, TICKD_RUNNER_TIMEOUT_MS: '1500' } });
    c = await LineClient.connect(daemon.tcp);
  });
  after(async () => { c?.close(); await daemon?.stop(); });

  const status = (id: string) => jobStatus(c, id);
  const waitStatus = (id: string, want: string) => waitFor(async () => (await status(id)) === want, 10000, `${id} ${want}`);

  describe('http', () => {
    let sink: Server;
    let port = 0;
    const seen: Array<{ method: string; body: string; type: string | undefined }> = [];
    before(async () => {
      sink = createServer((req: IncomingMessage, res) => {
        let body = '';
        req.on('data', (d) => { body += d; });
        req.on('end', () => {
          seen.push({ method: req.method!, body, type: req.headers['content-type'] });
          if (req.url === '/hang') return; // never answers
          res.statusCode = req.url === '/fail' ? 500 : req.url === '/moved' ? 302 : 204;
          if (res.statusCode === 302) res.setHeader('location', '/ok');
          res.end();
        });
      });
      await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
      port = (sink.address() as { port: number }).port;
    });
    after(() => { sink.closeAllConnections(); sink.close(); });

    it('POSTs the exact body and succeeds on 2xx; 500, 302 and a hung server fail', async () => {
      await c.request('1', `RULE SET hok. hok. http POST http://127.0.0.1:${port}/ok`);
      await c.request('2', `RULE SET hfail. hfail. http PUT http://127.0.0.1:${port}/fail`);
      await c.request('3', `RULE SET hmoved. hmoved. http GET http://127.0.0.1:${port}/moved`);
      await c.request('4', `RULE SET hhang. hhang. http DELETE http://127.0.0.1:${port}/hang`);
      const t = nowNs();
      for (const id of ['hok.1', 'hfail.1', 'hmoved.1', 'hhang.1']) await c.request('s', `SET ${id} ${t}`);
      await waitStatus('hok.1', 'executed');
      await waitStatus('hfail.1', 'failed');
      await waitStatus('hmoved.1', 'failed');
      await waitStatus('hhang.1', 'failed');
      const post = seen.find((s) => s.method === 'POST')!;
      expect(post.body).to.equal(`{"job_id":"hok.1","execution":${t}}`);
      expect(post.type).to.match(/^application\/json/);
      expect(seen.filter((s) => s.method === 'GET')).to.have.length(1); // the redirect was not followed
    });
  });

  it('redis RPUSH and PUBLISH', async function () {
    await requireService(this, 'redis', '127.0.0.1', 6379);
    const key = `tickd-it-${randomBytes(4).toString('hex')}`;
    const redis = createClient({ url: 'redis://127.0.0.1:6379/0' });
    const sub = redis.duplicate();
    await redis.connect();
    await sub.connect();
    const got: string[] = [];
    await sub.subscribe(`${key}.chan`, (m) => got.push(m));
    try {
      await c.request('1', `RULE SET rp. rp. redis redis://127.0.0.1:6379/0 RPUSH ${key}`);
      await c.request('2', `RULE SET rpub. rpub. redis redis://127.0.0.1:6379/0 PUBLISH ${key}.chan`);
      const t = nowNs();
      await c.request('3', `SET rp.job ${t}`);
      await c.request('4', `SET rpub.job ${t}`);
      await waitStatus('rp.job', 'executed');
      await waitStatus('rpub.job', 'executed');
      expect(await redis.lRange(key, 0, -1)).to.deep.equal(['rp.job']);
      await waitFor(() => got.length === 1, 5000, 'published message');
      expect(got).to.deep.equal(['rpub.job']);
      await c.request('5', 'RULE SET rbad. rbad. redis redis://127.0.0.1:1/0 SET k');
      await c.request('6', `SET rbad.job ${nowNs()}`);
      await waitStatus('rbad.job', 'failed');
    } finally {
      await redis.del([key, `${key}:tickd`]); // and the redis runner's companion list
      await sub.quit();
      await redis.quit();
    }
  });

  it('amqp publishes the job id; a wrong password fails the job', async function () {
    await requireService(this, 'rabbitmq', '127.0.0.1', 5672);
    const conn = await amqpConnect('amqp://guest:guest@127.0.0.1:5672/');
    const ch = await conn.createChannel();
    const exchange = `tickd-it-${randomBytes(4).toString('hex')}`;
    await ch.assertExchange(exchange, 'direct', { autoDelete: true });
    const { queue } = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue(queue, exchange, 'rk');
    try {
      await c.request('1', `RULE SET aq. aq. amqp amqp://guest:guest@127.0.0.1:5672/ ${exchange} rk`);
      await c.request('2', `RULE SET abad. abad. amqp amqp://guest:wrong@127.0.0.1:5672/ ${exchange} rk`);
      await c.request('3', `SET aq.job ${nowNs()}`);
      await c.request('4', `SET abad.job ${nowNs()}`);
      await waitStatus('aq.job', 'executed');
      await waitStatus('abad.job', 'failed');
      const msg = await ch.get(queue, { noAck: true });
      expect(msg && msg.content.toString()).to.equal('aq.job');
    } finally {
      await ch.close();
      await conn.close();
    }
  });

  it('awf runs `awf run <workflow> --input k=v` from PATH', async () => {
    await c.request('1', 'RULE SET awf. awf. awf deploy --input env=prod --input "msg=a b"');
    await c.request('2', `SET awf.job ${nowNs()}`);
    await waitStatus('awf.job', 'executed');
    expect(readFileSync(awfLog, 'utf8')).to.equal('run\ndeploy\n--input\nenv=prod\n--input\nmsg=a b\n');
  });
});
