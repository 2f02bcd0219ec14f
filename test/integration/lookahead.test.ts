// The lookahead through the real daemon (lib/engine/lookahead.ts -> 'prepare' ->
// lib/runner/http-preconnect.ts): a job on an http rule, due after a quiet spell, finds its
// connection to the webhook already open, and the runner child awake around its due time
// (cluster/runner-standby.ts: its debug line names the job's due time). The sink notes when it
// accepted each connection and when each request arrived (wall time, the clock the job's
// execution time is on).
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';

const DUE_IN_MS = 2500;

describe('lookahead: the connection of a job\'s webhook is open before the job is due', function () {
  this.timeout(30000);

  it('the sink accepts the one connection before the due time and the POST after it', async () => {
    const accepted: number[] = [];
    const posts: number[] = [];
    const sink = createServer((req, res) => {
      posts.push(Date.now());
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    sink.on('connection', () => accepted.push(Date.now()));
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const daemon = await Daemon.start({ config: { log: { level: 'debug' } } });
    try {
      const c = await LineClient.connect(daemon.tcp);
      const port = (sink.address() as AddressInfo).port;
      expect(await c.request('r', `RULE SET hook hook. http POST http://127.0.0.1:${port}/due`)).to.deep.equal(['r OK']);
      const dueMs = Date.now() + DUE_IN_MS;
      expect(await c.request('s', `SET hook.1 ${BigInt(dueMs) * 1_000_000n}`)).to.deep.equal(['s OK']);
      await waitFor(() => posts.length === 1, 15000, 'the POST of the job');
      expect(accepted, 'one connection in all').to.have.length(1);
      expect(accepted[0], 'accepted before the job was due').to.be.below(dueMs);
      expect(posts[0], 'the POST itself is not early').to.be.at.least(dueMs);
      const standby = await daemon.waitForLog((r) => r['msg'] === 'runner standby');
      expect(standby['role']).to.equal('runner');
      expect(standby['due']).to.equal(`${BigInt(dueMs) * 1_000_000n}`);
      // 'tail' only if the request came over TAIL_MS late (a loaded machine): either is a standby.
      expect(standby['ended']).to.be.oneOf(['request', 'tail']);
      expect(standby['awake_ms']).to.be.a('number').and.to.be.at.least(0);
      c.close();
    } finally {
      await daemon.stop();
      sink.closeAllConnections();
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    }
  });
});
