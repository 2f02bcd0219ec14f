// Node's compile cache, as bin/tickd enables it in a clone (node_modules/.cache/tickd;
// tickd(8) FILES): what type stripping made of each module, so that a process whose modules
// are all in it never loads the stripper (about 35 MB of each process's RSS for its whole life).
//
// Node writes what a process added only at its exit, and a child the primary kills (the fold
// child, a runner child) never gets there: every role saves once it has loaded its modules,
// so a worker forked later, the next start, and the next fold child find them there.
import module from 'node:module';
import { fileURLToPath } from 'node:url';

/** The cache bin/tickd enables in a clone (in an installed package, a path never in use). */
const OWN_CACHE = fileURLToPath(new URL('../node_modules/.cache/tickd', import.meta.url));

/** Writes what this process added to the compile cache (nothing when there is no cache). */
export function saveCompileCache(): void {
  module.flushCompileCache();
}

/**
 * Takes tickd's own cache out of the environment the runners' processes inherit: a job's
 * Node program should not write into tickd's cache. A cache the user gave tickd is theirs, and stays.
 */
export function keepCompileCacheFromJobs(): void {
  if (process.env['NODE_COMPILE_CACHE'] === OWN_CACHE) delete process.env['NODE_COMPILE_CACHE'];
}
