// Preloaded into the daemon's processes by a bench row (NODE_OPTIONS=--require): in the primary
// only, the event loop's delay (perf_hooks, 1 ms resolution) each second, written as
// `<epoch ms> <max ms> <p99 ms>` to TICKD_BENCH_LOOP_DELAY. A timer that fires late by d was
// held by a turn at least that long: the max is the longest turn of that second, within the
// resolution, which STAT's round trip (worker and IPC included) only bounds from above.
'use strict';
const { monitorEventLoopDelay, PerformanceObserver } = require('node:perf_hooks');
const { appendFileSync } = require('node:fs');
const out = process.env.TICKD_BENCH_LOOP_DELAY;
if (out && /(cluster[/\\]main\.ts|bin[/\\]tickd)$/.test(process.argv[1] || '')) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // Garbage collections of 3 ms and more, as `<epoch ms> gc <ms> <kind>` (perf_hooks'
  // NODE_PERFORMANCE_GC_*: 1 scavenge, 2 minor mark-sweep, 4 mark-compact, 8 incremental
  // marking): what of a long turn is V8's.
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.duration >= 3) appendFileSync(out, `${Math.round(performance.timeOrigin + e.startTime)} gc ${e.duration.toFixed(2)} ${e.detail?.kind ?? 0}\n`);
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    appendFileSync(out, `${Date.now()} ${(h.max / 1e6).toFixed(2)} ${(h.percentile(99) / 1e6).toFixed(2)}\n`);
    h.reset();
  }, 1000).unref();
}
