// TypeScript types generated from the document a real daemon serves (openapi-typescript, as a
// client project would run it) let a client narrow a runner on its wire value: `runner.type
// === 'shell'` must give `runner.command`. Without a discriminator mapping, openapi-typescript
// types `type` as the schema NAME ("RunnerShell"), and the same client no longer compiles; the
// control case strips the mappings and expects exactly that, so this test cannot pass vacuously.
// openapi-typescript needs the TypeScript 5 compiler API: it comes from its own small package,
// test/tools/openapi-typegen (see its package.json); the client is checked with the
// project's own tsc.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { HttpApi } from './http-client.ts';

const { resolve: resolvePackage } = createRequire(import.meta.url);
const TYPEGEN = createRequire(resolvePackage('tickd-openapi-typegen/package.json'));
const OPENAPI_TS = join(dirname(TYPEGEN.resolve('openapi-typescript/package.json')), 'bin/cli.js');
const TSC = join(dirname(resolvePackage('typescript/package.json')), 'bin/tsc');

// A client of the generated types: it narrows on `type`, reads a field only that kind has,
// handles every kind with an exhaustive switch, and builds a request body.
const CLIENT = `import type { components, paths } from './api.ts';

type Runner = components['schemas']['Runner'];
type Rule = paths['/rules/{id}']['get']['responses'][200]['content']['application/json'];

export function shellCommand(rule: Rule): string | null {
  const runner: Runner = rule.runner;
  if (runner.type === 'shell') return runner.command;
  return null;
}

export function describe(runner: Runner): string {
  switch (runner.type) {
    case 'shell': return runner.command;
    case 'direct': return [runner.executable, ...runner.args].join(' ');
    case 'http': return \`\${runner.method} \${runner.url}\`;
    case 'awf': return [runner.workflow, ...runner.inputs].join(' ');
    case 'amqp': return \`\${runner.exchange} \${runner.routing_key}\`;
    case 'redis': return \`\${runner.command} \${runner.key}\`;
    default: { const unknown: never = runner; return unknown; }
  }
}

export const body: paths['/rules/{id}']['put']['requestBody']['content']['application/json'] =
  { pattern: 'backup.', runner: { type: 'shell', command: 'true' } };
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true, noEmit: true, target: 'esnext', lib: ['esnext'], types: [],
    module: 'nodenext', moduleResolution: 'nodenext', allowImportingTsExtensions: true,
  },
  files: ['client.ts'],
};

interface Run { readonly code: number | null; readonly output: string }

function run(script: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString('utf8'); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Generates api.ts from `doc` in a fresh directory beside the client; returns tsc's verdict on it. */
async function typeCheck(dir: string, doc: string): Promise<Run> {
  mkdirSync(dir);
  writeFileSync(join(dir, 'openapi.json'), doc);
  const gen = await run(OPENAPI_TS, ['openapi.json', '--output', 'api.ts'], dir);
  expect(gen.code, gen.output).to.equal(0);
  writeFileSync(join(dir, 'client.ts'), CLIENT);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  return run(TSC, ['-p', 'tsconfig.json'], dir);
}

describe('TypeScript types generated from the served OpenAPI document', function () {
  this.timeout(60_000);
  const dir = tempDir('tickd-openapi-types-');
  let daemon: Daemon | undefined;
  let served = '';

  before(async () => {
    daemon = await Daemon.start({ config: { http: { listen: '127.0.0.1:0' } } });
    const api = new HttpApi(daemon.http!);
    try {
      const res = await api.request('GET', '/openapi.json');
      expect(res.status).to.equal(200);
      served = res.text;
    } finally {
      api.close();
    }
  });

  after(async () => { await daemon?.stop(); });

  it('openapi-typescript types let a client narrow on runner.type === \'shell\' (tsc --noEmit passes)', async () => {
    const res = await typeCheck(join(dir, 'served'), served);
    expect(res.output).to.equal('');
    expect(res.code).to.equal(0);
  });

  it('control: the same document without discriminator mappings fails that client (type "RunnerShell")', async () => {
    const doc = JSON.parse(served) as { components: { schemas: Record<string, { discriminator?: { mapping?: unknown } }> } };
    const stripped = Object.values(doc.components.schemas).filter((s) => s.discriminator?.mapping !== undefined);
    expect(stripped).to.have.length(3); // Runner, RunnerInput and AttemptOutcome
    for (const s of stripped) delete s.discriminator!.mapping;
    const res = await typeCheck(join(dir, 'no-mapping'), JSON.stringify(doc));
    expect(res.code).to.not.equal(0);
    expect(res.output).to.match(/client\.ts\(\d+,\d+\): error TS2367: .*"RunnerShell"/);
  });
});
