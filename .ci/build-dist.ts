// The package's build, run by `npm pack` (and `npm publish`): as prepack it writes dist/, what
// an installed package runs; as postpack (`--clean`) it removes it again, so a clone never
// holds compiled code that could go stale. The TypeScript sources stay the only truth.
//
// Why a build: Node strips types only outside node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_
// STRIPPING), so an installed tickd must be JavaScript. tsc (tsconfig.build.json) compiles
// lib/ and cluster/ into dist/lib and dist/cluster, rewriting the relative `.ts` import
// specifiers to `.js`; the paths built from import.meta.url at run time (the worker, fold
// child and runner child entries, cluster/supervisor.ts, cluster/fold-process.ts and
// cluster/runner-link.ts) take their module's own extension. Next to the JavaScript go the other files of those folders (the pages of
// lib/http/ui), and dist/package.json, which makes dist/ an ES module scope and carries the
// version that lib/version.ts reads from one folder up, as it does in a clone. bin/tickd runs
// dist/cluster/main.js when cluster/main.ts is absent.
//
// Why dist/ and not a .js beside each .ts: lib/http/ui holds hand-written .js files, and a pack
// must leave no generated file among the sources.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const SOURCE_DIRS = ['lib', 'cluster'];

/** Every file under `dir` (absolute paths). */
function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

function fail(message: string): never {
  process.stderr.write(`build-dist: ${message}\n`);
  process.exit(1);
}

function compile(): void {
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) fail(`tsc -p tsconfig.build.json failed (${r.status ?? r.signal})`);
}

/** The files tsc does not emit: copied as they are, to the same place under dist/. */
function copyAssets(): number {
  const assets = SOURCE_DIRS.flatMap((d) => walk(join(ROOT, d))).filter((f) => !f.endsWith('.ts'));
  for (const file of assets) {
    const to = join(DIST, relative(ROOT, file));
    mkdirSync(dirname(to), { recursive: true });
    cpSync(file, to);
  }
  return assets.length;
}

function writeScope(): void {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const scope = { '//': 'Written by .ci/build-dist.ts at npm pack: the compiled sources (see ../package.json).', version, type: 'module', private: true };
  writeFileSync(join(DIST, 'package.json'), `${JSON.stringify(scope, null, 2)}\n`);
}

/** No compiled module may still name a relative `.ts` file: an installed package has none. */
function checkNoTsPaths(): number {
  const modules = walk(join(DIST)).filter((f) => f.endsWith('.js') && !relative(DIST, f).startsWith(join('lib', 'http', 'ui')));
  const left: string[] = [];
  for (const file of modules) {
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (/^\s*(?:\/\/|\*|\/\*)/.test(line)) return; // a comment may cite a source file
      if (/(['"`])\.{1,2}\/[^'"`]*\.ts\1/.test(line)) left.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
    });
  }
  if (left.length > 0) fail(`compiled modules still name .ts files:\n${left.join('\n')}`);
  return modules.length;
}

rmSync(DIST, { recursive: true, force: true });
if (process.argv[2] !== '--clean') {
  compile();
  const assets = copyAssets();
  writeScope();
  const modules = checkNoTsPaths();
  // On stderr, like npm's own notes: `npm pack --json` keeps stdout for its JSON.
  process.stderr.write(`build-dist: dist/ holds ${modules} modules and ${assets} other files\n`);
}
