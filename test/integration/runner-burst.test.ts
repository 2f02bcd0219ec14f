// A burst of due process jobs must neither crash the primary (spawn failing with EMFILE once
// file descriptors run out) nor stall it (STAT stays answerable while the burst is started).
import { expect } from 'chai';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, stat, waitFor } from '../helpers/client.ts';

describe('a burst of due process jobs', function () {
  this.timeout(60000);

  it('under a low open-file limit: spawn failures fail jobs, the daemon keeps serving', async () => {
    // debug logging keeps stdout/stderr pipes, so every running child costs descriptors. Each
    // sleeps 5 s so that they pile up past the limit however fast this machine spawns: with
    // 0.5 s, a VM that spawned 50 a second never had more than 25 at once, and no spawn failed.
    const daemon = await Daemon.start({ nofile: 120, config: { log: { level: 'debug' } } });
    try {
      const c = await LineClient.connect(daemon.tcp);
      await c.request('r', 'RULE SET burst. burst. direct /bin/sleep 5');
      const at = BigInt(Date.now()) * 1_000_000n;
      let lines = '';
      for (let i = 0; i < 400; i++) lines += `s${i} SET burst.${i} ${at}\n`;
      c.write(lines);
      for (let i = 0; i < 400; i++) await c.collect(`s${i}`);
      await waitFor(async () => {
        const m = await stat(c);
        return Number(m.get('jobs_executed')) + Number(m.get('jobs_failed')) === 400;
      }, 40000, 'all 400 jobs finished');
      const m = await stat(c);
      expect(Number(m.get('jobs_failed')), 'some spawns hit EMFILE').to.be.greaterThan(0);
      expect(Number(m.get('jobs_executed')), 'the others ran').to.be.greaterThan(0);
      expect(daemon.proc.exitCode).to.equal(null);
      c.close();
    } finally {
      expect((await daemon.stop()).code).to.equal(0);
    }
  });

  it('STAT is answered promptly while thousands of due jobs are being started', async () => {
    const daemon = await Daemon.start();
    try {
      const c = await LineClient.connect(daemon.tcp);
      await c.request('r', 'RULE SET many. many. direct /bin/true');
      const at = BigInt(Date.now()) * 1_000_000n + 200_000_000n;
      let lines = '';
      for (let i = 0; i < 3000; i++) lines += `s${i} SET many.${i} ${at}\n`;
      c.write(lines);
      for (let i = 0; i < 3000; i++) await c.collect(`s${i}`);
      await waitFor(async () => Number((await stat(c)).get('executions_pending')) > 0, 5000, 'the burst to start');
      let worst = 0;
      while (Number((await stat(c)).get('executions_pending')) > 1000) {
        const t0 = performance.now();
        await stat(c);
        worst = Math.max(worst, performance.now() - t0);
      }
      // A generous bound: before the per-turn start budget, STAT waited for the whole burst (10 s+).
      expect(worst).to.be.below(1000);
      c.close();
    } finally {
      await daemon.stop();
    }
  });
});
