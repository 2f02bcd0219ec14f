// Preloaded into the daemon's processes by a bench row (NODE_OPTIONS=--require): in the primary
// only, the event loop's delay (perf_hooks, 1 ms resolution) each second, written as
// `<epoch ms> <max ms> <p99 ms> <cpu ms> <gap ms> <gap cpu ms>` to TICKD_BENCH_LOOP_DELAY. A
// timer that fires late by d was held by a turn at least that long: the max is the longest turn
// of that second, within the resolution, which STAT's round trip (worker and IPC included) only
// bounds from above.
//
// A turn that long may have been the primary's work or the machine's: a process that is ready
// to run waits for a CPU while others use both. So a 1 ms timer also reads the main thread's own
// CPU time (process.threadCpuUsage) at each firing: `cpu` is the most it used between two
// firings (so at least its longest turn's own work, collections on the main thread included;
// the probe costs a syscall a millisecond), `gap` the longest time between two firings and
// `gap cpu` what the main thread ran of it; the rest it was off a CPU (waiting for one, or for
// V8's collector threads). On a virtual machine whose host reports no steal time (this one's
// /proc/stat), the host taking the virtual CPU away counts as running: `cpu` can only overstate.
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
  const cpuMs = () => { const u = process.threadCpuUsage(); return (u.user + u.system) / 1000; };
  let lastAt = performance.now();
  let lastCpu = cpuMs();
  let most = { cpu: 0, gap: 0, gapCpu: 0 };
  setInterval(() => {
    const at = performance.now();
    const cpu = cpuMs();
    const gap = at - lastAt;
    const used = cpu - lastCpu;
    if (used > most.cpu) most.cpu = used;
    if (gap > most.gap) { most.gap = gap; most.gapCpu = used; }
    lastAt = at;
    lastCpu = cpu;
  }, 1).unref();
  setInterval(() => {
    appendFileSync(out, `${Date.now()} ${(h.max / 1e6).toFixed(2)} ${(h.percentile(99) / 1e6).toFixed(2)} ${most.cpu.toFixed(2)} ${most.gap.toFixed(2)} ${most.gapCpu.toFixed(2)}\n`);
    h.reset();
    most = { cpu: 0, gap: 0, gapCpu: 0 };
  }, 1000).unref();
}
