// glibc's malloc tuning as bin/tickd gives it to the daemon's processes (a fixed mmap threshold,
// in GLIBC_TUNABLES; tickd(8) Footprint): a daemon's choice, not the jobs'. A job's program
// gets the GLIBC_TUNABLES tickd itself was given, with what bin/tickd added taken out.

/** What bin/tickd appends to GLIBC_TUNABLES (keep in step with it). */
export const OWN_TUNABLE = 'glibc.malloc.mmap_threshold=131072';

/** GLIBC_TUNABLES without what bin/tickd added: undefined when nothing else is left. */
export function tunablesForJobs(value: string | undefined): string | undefined {
  if (value === undefined || value === OWN_TUNABLE) return undefined;
  return value.endsWith(`:${OWN_TUNABLE}`) ? value.slice(0, -OWN_TUNABLE.length - 1) : value;
}

/** Takes bin/tickd's malloc tuning out of the environment the runners' processes inherit. */
export function keepMallocTunablesFromJobs(): void {
  const forJobs = tunablesForJobs(process.env['GLIBC_TUNABLES']);
  if (forJobs === undefined) delete process.env['GLIBC_TUNABLES'];
  else process.env['GLIBC_TUNABLES'] = forJobs;
}
