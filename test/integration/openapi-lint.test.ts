// The OpenAPI document of every configuration (with and without an auth_file, cluster mode or
// not) through two real linters, as a user would run them: Redocly CLI `lint` with its
// `recommended` rules and Spectral with `spectral:oas`. Zero errors and zero warnings, except
// the rules switched off below, each with its reason. The documents are written as GET
// /openapi.json writes them (lib/http/routes/meta.ts: toJson(buildOpenApi(...))).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildOpenApi } from '../../lib/http/openapi.ts';
import { toJson } from '../../lib/http/json.ts';
import { VERSION } from '../../lib/version.ts';
import { tempDir } from '../helpers/tmp.ts';

const { resolve: resolvePackage } = createRequire(import.meta.url);
const REDOCLY = join(dirname(resolvePackage('@redocly/cli/package.json')), 'bin/cli.js');
const SPECTRAL = join(dirname(resolvePackage('@stoplight/spectral-cli/package.json')), 'dist/index.js');

/** Rules switched off, and why. Anything else either linter reports fails the test. */
const REDOCLY_OFF = {
  // GET /health, /openapi.json (and, without an auth_file, /stats and /cluster) take no input
  // and need no token: they have no client error to document. 404 and 405 belong to paths and
  // methods, not to an operation, and the document says so once, in info.description.
  'operation-4xx-response': 'off',
} as const;
const REDOCLY_OFF_OPEN = {
  // Without an auth_file nothing is required, and the document says so by having no
  // `security` (the console and the HTTP tests read it that way). The rule wants a requirement
  // on every operation or at the root.
  'security-defined': 'off',
} as const;
const SPECTRAL_OFF = {
  // A daemon that every operator runs for themselves has no contact to name; an invented one
  // would be worse than none.
  'info-contact': 'off',
} as const;

interface Run { readonly code: number | null; readonly stdout: string; readonly stderr: string }

function run(script: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env = {
      ...process.env, NO_COLOR: '1',
      // No usage reports or update checks: nothing may leave the machine.
      REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    };
    const child = spawn(process.execPath, [script, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString('utf8'); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const CONFIGS = [
  { name: 'auth-cluster', auth: true, cluster: true },
  { name: 'auth-alone', auth: true, cluster: false },
  { name: 'open-cluster', auth: false, cluster: true },
  { name: 'open-alone', auth: false, cluster: false },
] as const;

describe('OpenAPI document through Redocly CLI and Spectral', function () {
  this.timeout(60_000);
  const dir = tempDir('tickd-openapi-lint-');
  const files: Record<string, string> = {};

  before(() => {
    for (const c of CONFIGS) {
      files[c.name] = join(dir, `${c.name}.json`);
      writeFileSync(files[c.name]!, toJson(buildOpenApi({ version: VERSION, auth: c.auth, cluster: c.cluster })));
    }
  });

  for (const open of [false, true]) {
    const names = CONFIGS.filter((c) => c.auth !== open).map((c) => c.name);
    it(`redocly lint (recommended): no error, no warning ${open ? 'without an auth_file' : 'with an auth_file'}`, async () => {
      const config = join(dir, open ? 'redocly-open.yaml' : 'redocly.yaml');
      // JSON is YAML; `telemetry: off` as well as the environment.
      writeFileSync(config, JSON.stringify({ extends: ['recommended'], telemetry: 'off', rules: { ...REDOCLY_OFF, ...(open && REDOCLY_OFF_OPEN) } }));
      const res = await run(REDOCLY, ['lint', '--config', config, '--format=json', ...names.map((n) => files[n]!)], dir);
      const report = `${res.stdout}\n${res.stderr}`;
      // --format=json writes one report per document, each with its totals.
      const totals = [...res.stdout.matchAll(/"totals":\s*\{\s*"errors":\s*(\d+),\s*"warnings":\s*(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
      expect(totals, report).to.deep.equal(names.map(() => [0, 0]));
      expect(res.code, report).to.equal(0);
    });
  }

  it('spectral lint (spectral:oas): no result of any severity, hints included', async () => {
    const ruleset = join(dir, '.spectral.json');
    writeFileSync(ruleset, JSON.stringify({ extends: ['spectral:oas'], rules: SPECTRAL_OFF }));
    const res = await run(SPECTRAL, ['lint', '--quiet', '--ruleset', ruleset, '--format', 'json', '--fail-severity', 'hint', ...Object.values(files)], dir);
    const report = `${res.stdout}\n${res.stderr}`;
    expect(JSON.parse(res.stdout), report).to.deep.equal([]);
    expect(res.code, report).to.equal(0);
  });
});
