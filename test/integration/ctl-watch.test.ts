// `tickd ctl watch` against the real daemon (tickd-ctl(1) WATCH): as JSON lines (stdout not a
// terminal) it reports a job going from planned to executed with an upper bound of its
// lateness, the STAT counts and rates every poll, a removal, and ends with status 0 on Ctrl-C.
import { expect } from 'chai';
import { STAT_KEYS } from '../../lib/domain/stat.ts';
import { Daemon } from '../helpers/daemon.ts';
import { jobStatus, LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { addrOf, BackgroundCtl } from '../helpers/ctl.ts';

interface Event { type: 'job'; id: string; from: string | null; to: string | null; execution: number; lateness_max_ns: number | null; time: string }

function events(w: BackgroundCtl): Event[] {
  return w.lines.filter((l) => l.startsWith('{"type":"job"')).map((l) => JSON.parse(l) as Event);
}

describe('tickd ctl watch', function () {
  this.timeout(60_000);
  let daemon: Daemon;
  let c: LineClient;

  before(async () => {
    daemon = await Daemon.start();
    c = await LineClient.connect(daemon.tcp);
    expect(await c.request('r', 'RULE SET w w. direct /bin/true')).to.deep.equal(['r OK']);
  });
  after(async () => {
    c?.close();
    await daemon?.stop();
  });

  it('sees a job go from planned to executed, with its lateness as an upper bound; Ctrl-C exits 0', async () => {
    await c.request('s', 'SET w.old 1000'); // runs at once: part of the baseline, never an event
    // Done before the watch starts, or its first poll may see it still running (a full run
    // under load saw it change, as an event).
    await waitFor(async () => (await jobStatus(c, 'w.old')) === 'executed', 15_000, 'w.old executed');
    const w = new BackgroundCtl(['--addr', addrOf(daemon.tcp), 'watch', 'w.', '--interval', '100ms']);
    try {
      const first = JSON.parse(await w.waitForLine((l) => l.startsWith('{"type":"stat"'), 15_000, 'first poll')) as Record<string, unknown>;
      expect(first).to.include({ prefix: 'w.', rates_per_s: null });
      expect(Object.keys(first['stat'] as object)).to.deep.equal([...STAT_KEYS]);
      const due = nowNs() + 1_500_000_000n;
      expect(await c.request('s', `SET w.job ${due}`)).to.deep.equal(['s OK']);
      await w.waitForLine((l) => l.includes('"id":"w.job"') && l.includes('"to":"planned"'), 15_000, 'w.job planned');
      const doneLine = await w.waitForLine((l) => l.includes('"id":"w.job"') && l.includes('"to":"executed"'), 15_000, 'w.job executed');
      const done = JSON.parse(doneLine) as Event;
      expect(doneLine).to.include(`"execution":${due}`); // exact, not through a float
      expect(['planned', 'triggered']).to.include(done.from);
      const lastSeenPlanned = events(w).filter((e) => e.id === 'w.job');
      expect(lastSeenPlanned[0]).to.include({ from: null, to: 'planned', lateness_max_ns: null });
      // The firing happened at or after `due` and before the line arrived: 0 <= bound, and it
      // is no worse than a poll interval plus the firing itself on a busy machine.
      const firing = events(w).find((e) => e.id === 'w.job' && e.lateness_max_ns !== null)!;
      expect(firing.lateness_max_ns).to.be.at.least(0).and.below(5e9);
      expect(events(w).some((e) => e.id === 'w.old')).to.equal(false);
      expect(await c.request('d', 'REMOVE w.job')).to.deep.equal(['d OK']);
      await w.waitForLine((l) => l.includes('"id":"w.job"') && l.includes('"to":null'), 15_000, 'w.job removed');
      const later = w.lines.filter((l) => l.startsWith('{"type":"stat"')).map((l) => JSON.parse(l) as { rates_per_s: Record<string, number> | null; watched: number });
      expect(later.at(-1)!.rates_per_s).to.have.all.keys('jobs_total', 'jobs_executed', 'jobs_failed');
      expect(later.at(-1)!.watched).to.equal(1);
    } finally {
      w.kill('SIGINT');
    }
    expect(await w.exited).to.equal(0);
    expect(w.stderr).to.equal('');
    for (const line of w.lines) expect(() => JSON.parse(line), line).to.not.throw();
  });

  it('a daemon that goes away ends watch with status 3', async () => {
    const other = await Daemon.start();
    const w = new BackgroundCtl(['--addr', addrOf(other.tcp), 'watch', '--interval', '100ms']);
    await w.waitForLine((l) => l.startsWith('{"type":"stat"'), 15_000, 'first poll');
    await other.kill();
    const code = await w.exited;
    expect(code).to.equal(3);
    expect(w.stderr).to.match(/^tickd ctl: connection to 127\.0\.0\.1:\d+ closed before the answer/);
  });
});
