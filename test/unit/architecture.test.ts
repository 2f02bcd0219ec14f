// The architecture's import boundaries (README.md, Layout), checked on the source text:
// worker-side folders never import primary-side ones and the reverse; lib/ knows nothing of
// node:cluster or cluster/; lib/domain depends only on itself (and the pure error registry);
// the worker entry never loads engine modules, the primary never loads protocol parsing; and
// the layers of lib/ and cluster/ (README.md, Layout): no file imports from a layer above its
// own, and no files import each other in a cycle (static, dynamic and type-only imports all count).
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WORKER_SIDE = ['lib/protocol', 'lib/http', 'lib/net'];
const PRIMARY_SIDE = ['lib/engine', 'lib/store', 'lib/logfile', 'lib/persistence', 'lib/runner'];

/**
 * The layers, top to bottom: a file may import from its own layer and the ones below. Folders
 * of one layer know nothing of each other's insides beyond that (the cycle check keeps them
 * honest). lib/tools (the offline subcommands, dump and import) stands over every log it reads.
 * The engine holds the scheduler (firing, lookahead, the tick's pacing): they share one state
 * and were one unit cut in two.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['cluster'],
  ['lib/tools'],
  ['lib/persistence'],
  ['lib/leadership', 'lib/placement'],
  ['lib/jetstream'],
  ['lib/logfile'],
  ['lib/ctl', 'lib/client', 'lib/engine', 'lib/net'],
  ['lib/http', 'lib/runner', 'lib/protocol'],
  ['lib/auth', 'lib/telemetry'],
  ['lib/store', 'lib/config', 'lib/lease'],
  ['lib/domain', 'lib/schedule', 'lib/cli.ts', 'lib/log.ts'],
  ['lib/clock.ts', 'lib/version.ts', 'lib/errors.ts', 'lib/log-format.ts', 'lib/log-batch.ts'],
];

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) return tsFiles(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

/** Every module a file imports (static and dynamic), as repository-relative paths or bare names;
 * with `runtimeOnly`, leaves out `import type` (erased before the code runs). */
function importsOf(file: string, runtimeOnly = false, staticOnly = false): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const re = /(?:^|\n)\s*((?:import|export)\s(?:type\s)?)[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;
  const specs = [...text.matchAll(re)]
    .filter((m) => !(runtimeOnly && m[1]?.endsWith('type ')) && !(staticOnly && m[3] !== undefined))
    .map((m) => m[2] ?? m[3]!);
  return specs.map((s) => (s.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), s)) : s));
}

const inside = (path: string, dirs: string[]) => dirs.some((d) => path === d || path.startsWith(`${d}/`));

/** The modules an entry file loads when it runs (transitive, runtime imports only). */
function closure(entry: string, staticOnly = false): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const dep of importsOf(f, true, staticOnly)) {
      if (dep.endsWith('.ts')) todo.push(dep);
      else seen.add(dep); // a package or node: module, recorded, not followed
    }
  }
  return seen;
}

function layerOf(file: string): number {
  return LAYERS.findIndex((layer) => inside(file, [...layer]));
}

/** The import graph of lib/ and cluster/: each file's imports of other files there. */
function graph(): Map<string, string[]> {
  const files = [...tsFiles('lib'), ...tsFiles('cluster')];
  const known = new Set(files);
  return new Map(files.map((f) => [f, importsOf(f).filter((d) => known.has(d))]));
}

/** The cycles of a graph (Tarjan's strongly connected components of more than one file, or a self-import). */
function cycles(g: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (g.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of g.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('architecture', () => {
  it('every file of lib/ and cluster/ has a layer, and imports only from its own layer or below', () => {
    const up: string[] = [];
    for (const [f, deps] of graph()) {
      expect(layerOf(f), `${f} is in no layer (add it to LAYERS and README.md, Layout)`).to.be.at.least(0);
      for (const d of deps) if (layerOf(d) < layerOf(f)) up.push(`${f} -> ${d}`);
    }
    expect(up).to.deep.equal([]);
  });

  it('no files of lib/ and cluster/ import each other in a cycle', () => {
    expect(cycles(graph())).to.deep.equal([]);
  });

  it('the layer and cycle checks catch what they are for', () => {
    expect(layerOf('lib/engine/engine.ts')).to.be.lessThan(layerOf('lib/store/jobs.ts'));
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).to.deep.equal([['a', 'b', 'c']]);
    expect(cycles(new Map([['a', ['a']]]))).to.deep.equal([['a']]);
    expect(cycles(new Map([['a', ['b']], ['b', []]]))).to.deep.equal([]);
  });

  it('worker-side folders never import primary-side ones', () => {
    for (const f of WORKER_SIDE.flatMap(tsFiles)) {
      for (const dep of importsOf(f)) expect(inside(dep, PRIMARY_SIDE), `${f} imports ${dep}`).to.equal(false);
    }
  });

  it('primary-side folders never import worker-side ones', () => {
    for (const f of PRIMARY_SIDE.flatMap(tsFiles)) {
      for (const dep of importsOf(f)) expect(inside(dep, WORKER_SIDE), `${f} imports ${dep}`).to.equal(false);
    }
  });

  it('lib/ has no cluster or IPC knowledge: every process role and its messages live in cluster/', () => {
    // Sending (process.send, optional call included, child.send), receiving ('message' and
    // 'disconnect' listeners), and opening a channel ('ipc' stdio, fork) are all IPC.
    const IPC = /node:cluster|\bprocess\.send\b|\.send\??\.?\(|\.on\(\s*['"](?:message|disconnect)['"]|['"]ipc['"]|\bfork\(/;
    for (const f of tsFiles('lib')) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      expect(text, f).not.to.match(IPC);
      for (const dep of importsOf(f)) expect(dep.startsWith('cluster/'), `${f} imports ${dep}`).to.equal(false);
    }
  });

  it('unit tests start no process and open no socket (those belong in test/integration)', () => {
    for (const f of tsFiles('test/unit')) {
      for (const dep of importsOf(f, true)) {
        const outward = ['node:child_process', 'node:net', 'node:tls', 'node:cluster', 'redis', 'amqplib'].includes(dep)
          || dep === 'test/helpers/daemon.ts' || dep === 'node:http';
        expect(outward, `${f} imports ${dep}`).to.equal(false);
      }
    }
  });

  it('lib/domain depends only on itself and the error registry', () => {
    for (const f of tsFiles('lib/domain')) {
      for (const dep of importsOf(f)) expect(inside(dep, ['lib/domain']) || dep === 'lib/errors.ts', `${f} imports ${dep}`).to.equal(true);
    }
  });

  it('the worker never loads engine, store, logfile or runner modules', () => {
    const loaded = [...closure('cluster/worker.ts')];
    expect(loaded.filter((f) => inside(f, PRIMARY_SIDE))).to.deep.equal([]);
    expect(loaded).to.include('lib/net/tcp.ts');
  });

  it('the client (tickd ctl) loads no daemon module: it reuses the pure protocol and domain code only', () => {
    const loaded = [...closure('lib/ctl/main.ts')];
    const daemonSide = [...PRIMARY_SIDE, 'lib/net', 'lib/config', 'lib/auth', 'lib/telemetry', 'lib/jetstream', 'lib/lease', 'lib/leadership', 'cluster'];
    expect(loaded.filter((f) => inside(f, daemonSide))).to.deep.equal([]);
    expect(loaded.filter((f) => inside(f, ['lib/http']))).to.deep.equal(['lib/http/json.ts']);
    expect(loaded).to.include.members(['lib/client/core.ts', 'lib/protocol/tokenize.ts', 'lib/domain/time.ts']);
  });

  it('the client library loads only itself, the tokenizer and pure domain modules (it runs on Node 20)', () => {
    const loaded = [...closure('lib/client/index.ts')];
    expect(loaded.filter((f) => !inside(f, ['lib/client', 'lib/domain']) && f !== 'lib/protocol/tokenize.ts' && !f.startsWith('node:'))).to.deep.equal([]);
    expect(loaded).to.include.members(['lib/client/core.ts', 'lib/protocol/tokenize.ts', 'lib/domain/time.ts']);
  });

  it('the primary loads no runner: executions run in the runner child (cluster/runner-child.ts)', () => {
    const runnerSide = (files: Set<string>) => [...files].filter((f) => inside(f, ['lib/runner']) && f !== 'lib/runner/execution.ts');
    expect(runnerSide(closure('cluster/primary.ts'))).to.deep.equal([]);
    const child = closure('cluster/runner-child.ts');
    expect(child).to.include.members(['lib/runner/pool.ts', 'lib/runner/http.ts', 'lib/runner/redis.ts', 'lib/runner/amqp.ts', 'lib/runner/process.ts']);
    expect([...child].filter((f) => inside(f, ['lib/engine', 'lib/store', 'lib/logfile']))).to.deep.equal([]);
  });

  it('a worker starts with no engine, store, runner, logfile or cluster module, and no telemetry SDK (loaded only when telemetry is on)', () => {
    const loaded = [...closure('cluster/worker.ts', true)];
    expect(loaded.filter((f) => inside(f, ['lib/engine', 'lib/store', 'lib/runner', 'lib/logfile', 'lib/persistence', 'lib/jetstream', 'lib/leadership']))).to.deep.equal([]);
    expect(loaded.filter((f) => f.startsWith('@opentelemetry/') || f.startsWith('@nats-io/'))).to.deep.equal([]);
    expect(loaded).to.include.members(['lib/net/tcp.ts', 'cluster/worker-http.ts']);
  });

  it('a single node\'s primary starts without the cluster modules (NATS, leadership): loaded in cluster mode only', () => {
    const loaded = [...closure('cluster/primary.ts', true)];
    expect(loaded.filter((f) => inside(f, ['lib/jetstream', 'lib/leadership', 'lib/lease', 'lib/placement']) || f.startsWith('@nats-io/'))).to.deep.equal([]);
    expect([...closure('cluster/primary.ts')]).to.include('lib/persistence/cluster-storage.ts');
  });

  it('the primary never loads protocol parsing, HTTP or socket modules', () => {
    const loaded = [...closure('cluster/primary.ts')];
    expect(loaded.filter((f) => inside(f, WORKER_SIDE))).to.deep.equal([]);
    expect(loaded).to.include('lib/engine/engine.ts');
  });
});
