// `tickd ctl watch [PREFIX]` (tickd-ctl(1) WATCH): polls QUERY PREFIX and STAT every
// --interval on one connection, both requests pipelined, and shows what changed
// (watch-diff.ts): redrawn in place on a terminal, JSON lines otherwise. Needs nothing new from
// the daemon, so it works against any tickd. The next poll starts an interval after the
// previous one started, or at once if that one took longer. Ctrl-C ends it with status 0.
import { EpochClock } from '../clock.ts';
import type { Job } from '../domain/job.ts';
import { expectOk, type Prepare } from './context.ts';
import { checkPrefix } from './job-commands.ts';
import { parseJobLine } from '../client/replies.ts';
import { addrOf, listing } from './requests.ts';
import { fetchStat } from './server-commands.ts';
import { intervalMs } from './settings.ts';
import { JobTracker, StatRates, type JobEvent, type SeenJob } from './watch-diff.ts';
import { eventLine, screen, statLine } from './watch-view.ts';

/** Events kept for the terminal view. */
const KEEP_EVENTS = 500;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const done = () => { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

export const watch: Prepare = (args, input) => {
  const prefix = checkPrefix(args[0]);
  const interval = intervalMs(input.options);
  return async (ctx) => {
    const client = await ctx.client();
    const clock = new EpochClock();
    const live = ctx.stdoutTTY && ctx.format !== 'json';
    const tracker = new JobTracker();
    const rates = new StatRates();
    let recent: JobEvent[] = [];
    const stop = () => client.destroy();
    ctx.signal.addEventListener('abort', stop);
    if (live) ctx.out.write('\x1b[?1049h\x1b[?25l'); // the alternate screen, cursor hidden
    try {
      while (!ctx.signal.aborted) {
        const started = performance.now();
        const seen: SeenJob[] = [];
        const jobs = listing(client, prefix === '' ? 'QUERY' : `QUERY ${prefix}`, parseJobLine, (job: Job) => { seen.push({ job, seenNs: clock.nowNs() }); });
        const [answer, { pairs }] = await Promise.all([jobs, fetchStat(client)]);
        expectOk(answer);
        const atNs = clock.nowNs();
        const events = tracker.update(seen, atNs);
        const view = { addr: addrOf(client), prefix, intervalMs: interval, atNs, stat: pairs, rates: rates.update(pairs, atNs), watched: tracker.size };
        if (live) {
          recent = [...recent, ...events].slice(-KEEP_EVENTS);
          ctx.out.write(screen(view, recent, ctx.screen(), ctx.color));
        } else {
          ctx.out.write(statLine(view) + events.map(eventLine).join(''));
        }
        await ctx.out.flush();
        if (ctx.out.broken) break;
        await pause(interval - (performance.now() - started), ctx.signal);
      }
    } catch (err) {
      if (!ctx.signal.aborted) throw err;
    } finally {
      ctx.signal.removeEventListener('abort', stop);
      if (live) ctx.out.write('\x1b[?25h\x1b[?1049l');
    }
    return 0;
  };
};
