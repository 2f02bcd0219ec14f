// Fills a clone's compile cache (node_modules/.cache/tickd, which bin/tickd enables: tickd(8)
// FILES) with what type stripping makes of every source file of lib/ and cluster/, so that
// even the daemon's first start after `npm ci` runs no process that loads the stripper
// (about 35 MB of RSS in each, for its whole life). Run by `npm ci` (the `prepare` script).
//
// How, without running any of it: one module imports a module that throws first, then every
// source file. Node loads and compiles a module's whole graph (and caches each compiled file)
// before it evaluates any of it, and evaluation stops at the first module, which throws. So no
// entry runs (cluster/main.ts would start a daemon) and nothing is left behind but the cache.
import module from 'node:module';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STOP = 'tickd: compile cache filled';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const cache = module.enableCompileCache(join(ROOT, 'node_modules', '.cache', 'tickd'));
if (cache.status !== module.constants.compileCacheStatus.ENABLED) {
  process.stderr.write(`warm-compile-cache: no compile cache (${cache.message ?? `status ${cache.status}`}); nothing to do\n`);
} else {
  const files = [...sources(join(ROOT, 'lib')), ...sources(join(ROOT, 'cluster'))];
  const dir = mkdtempSync(join(tmpdir(), 'tickd-warm-'));
  const graph = join(dir, 'graph.mjs');
  const stop = `data:text/javascript,throw new Error(${encodeURIComponent(JSON.stringify(STOP))})`;
  writeFileSync(graph, [stop, ...files.map((f) => pathToFileURL(f).href)].map((u) => `import ${JSON.stringify(u)};`).join('\n'));
  // Never fails an install: a source that does not load fails the tests, and the daemon
  // then caches what it loads itself.
  let outcome = `${files.length} source files in ${cache.directory}`;
  try {
    await import(pathToFileURL(graph).href);
    outcome = 'the sources were run (nothing threw first); the cache may be partial';
  } catch (err) {
    if ((err as Error).message !== STOP) outcome = `not filled: ${(err as Error).message}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  module.flushCompileCache();
  process.stderr.write(`warm-compile-cache: ${outcome}\n`);
}
