// The man pages (man/tickd.8, man/tickd.toml.5, man/tickd-protocol.7) render without a
// warning and document exactly what the code has, so that neither can drift: CLI flags
// (parsed from the parseArgs option tables of lib/cli.ts and lib/tools/dump.ts), every
// SCHEMA key with its type and default and no other, the startup error names, the TICKD_*
// environment variables the code reads, and the protocol's instructions, runner kinds,
// STAT keys, error codes, limits and HTTP routes.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCHEMA, type KeyDef } from '../../lib/config/schema.ts';
import { STAT_KEYS } from '../../lib/domain/stat.ts';
import { HTTP_METHODS, REDIS_COMMANDS, RUNNER_TYPES } from '../../lib/domain/runner-spec.ts';
import { MAX_IDENTIFIER_BYTES } from '../../lib/domain/identifier.ts';
import { ERRORS } from '../../lib/errors.ts';
import { MAX_LINE_BYTES } from '../../lib/protocol/framer.ts';
import { AUTH_DEADLINE_MS } from '../../lib/net/tcp.ts';
import { routes } from '../../lib/http/app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const source = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');
const PAGES = ['man/tickd.8', 'man/tickd.toml.5', 'man/tickd-protocol.7'] as const;
const HAS_GROFF = spawnSync('groff', ['--version']).status === 0;

/** The page as a reader sees it: plain ASCII, no hyphenation, lines wide enough to keep tags whole. */
function rendered(page: string): string {
  const r = spawnSync('groff', ['-man', '-Tascii', '-P-c', '-P-b', '-P-o', '-P-u', '-rHY=0', '-rLL=250n', join(ROOT, page)], { encoding: 'utf8' });
  expect(r.status, r.stderr).to.equal(0);
  return r.stdout;
}

/** The lines of one `.SH` section of a rendered page (up to the next unindented heading). */
function section(text: string, heading: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l === heading);
  expect(start, `section ${heading}`).to.be.greaterThan(-1);
  const end = lines.findIndex((l, i) => i > start && /^[A-Z]/.test(l));
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** Tag lines of a .TP list in rendered text: indented by exactly 7 spaces. */
function tags(text: string): string[] {
  return text.split('\n').filter((l) => /^ {7}\S/.test(l)).map((l) => l.trim());
}

interface CliOption { readonly name: string; readonly short: string | null }

/** The option table of the parseArgs call in a source file, read from its text. */
/** The body of the object literal whose `{` follows `marker` in `text`. */
function objectBody(text: string, marker: string, from = 0): string {
  const at = text.indexOf(marker, from);
  expect(at, marker).to.be.greaterThan(-1);
  let depth = 0;
  let end = at + marker.length - 1;
  for (; end < text.length; end++) {
    if (text[end] === '{') depth++;
    else if (text[end] === '}' && --depth === 0) break;
  }
  return text.slice(at + marker.length, end);
}

function parseArgsOptions(rel: string): CliOption[] {
  const text = source(rel);
  let block = objectBody(text, 'options: {', text.search(/parseArgs\w*\(\{/));
  // Shared option tables spread in (`...CLUSTER_CONNECTION_OPTIONS`) are exported by lib/cli.ts.
  for (const spread of block.matchAll(/\.\.\.([A-Z_]+)/g)) block += objectBody(source('lib/cli.ts'), `const ${spread[1]} = {`);
  const out: CliOption[] = [];
  for (const m of block.matchAll(/(?:'([a-z][a-z-]*)'|([a-z][a-zA-Z]*))\s*:\s*\{([^}]*)\}/g)) {
    expect(m[3], `option ${m[1] ?? m[2]}`).to.match(/type:\s*'(string|boolean)'/);
    out.push({ name: (m[1] ?? m[2])!, short: /short:\s*'(\w)'/.exec(m[3]!)?.[1] ?? null });
  }
  expect(out.length, `options found in ${rel}`).to.be.greaterThan(2);
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) return sourceFiles(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

const TYPE_WORDS: Record<KeyDef['type'], string> = {
  string: 'string', enum: 'string', bool: 'boolean', int: 'integer', 'string[]': 'array of strings',
  listen: 'address', path: 'path', url: 'URL',
};

function defaultText(def: KeyDef): string {
  const d = def.default;
  if (d === null) return 'unset';
  if (typeof d === 'string') return `"${d}"`;
  if (Array.isArray(d)) return `[${d.map((s) => `"${s}"`).join(', ')}]`;
  return String(d);
}

/** `.SS "[section]"` + `.TP` + `\fBkey\fR (\fItype\fR, default ...)` entries of tickd.toml.5. */
function documentedKeys(): Map<string, { type: string; default: string }> {
  const lines = source('man/tickd.toml.5').split('\n');
  const keys = new Map<string, { type: string; default: string }>();
  let sectionName: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('.SH')) sectionName = null;
    const ss = /^\.SS "\[([a-z]+)\]"$/.exec(line);
    if (ss) sectionName = ss[1]!;
    if (line !== '.TP' || sectionName === null) continue;
    const entry = /^\\fB([a-z_]+)\\fR \(\\fI([^\\]+)\\fR, default (.+)\)$/.exec(lines[i + 1] ?? '');
    expect(entry, `key entry after line ${i + 1} of tickd.toml.5: ${lines[i + 1]}`).to.not.equal(null);
    const plain = entry![3]!.replace(/\\f[BIRP]/g, '').replace(/\\-/g, '-');
    keys.set(`${sectionName}.${entry![1]}`, { type: entry![2]!, default: plain });
  }
  return keys;
}

const version = (JSON.parse(source('package.json')) as { version: string }).version;

describe('man pages', function () {
  before(function () {
    if (!HAS_GROFF) this.skip();
  });

  for (const page of PAGES) {
    it(`${page} renders with no groff warning`, () => {
      const r = spawnSync('groff', ['-man', '-ww', '-z', join(ROOT, page)], { encoding: 'utf8' });
      expect(r.status).to.equal(0);
      expect(r.stderr).to.equal('');
    });

    it(`${page} names the package version`, () => {
      expect(source(page)).to.match(new RegExp(`^\\.TH .* "tickd ${version.replace(/\./g, '\\.')}"`, 'm'));
    });
  }

  describe('tickd(8)', () => {
    const cli = parseArgsOptions('lib/cli.ts');
    const dump = parseArgsOptions('lib/tools/dump.ts');
    const imports = parseArgsOptions('lib/tools/import.ts');

    it('documents every flag of lib/cli.ts in OPTIONS, with its short form', () => {
      const options = tags(section(rendered('man/tickd.8'), 'OPTIONS'));
      for (const o of cli) {
        const tag = o.short === null ? `--${o.name}` : `-${o.short}, --${o.name}`;
        expect(options.some((t) => t === tag || t.startsWith(`${tag} `)), `OPTIONS entry ${tag}`).to.equal(true);
      }
    });

    it('documents every dump option', () => {
      const dumpText = section(rendered('man/tickd.8'), 'THE DUMP SUBCOMMAND');
      for (const o of dump) expect(tags(dumpText).some((t) => t.startsWith(`--${o.name}`)), `--${o.name}`).to.equal(true);
    });

    it('mentions no flag the code lacks', () => {
      const text = rendered('man/tickd.8');
      // Node's own options the page names (Footprint: the young generation's cap bin/tickd gives).
      const node = ['--max-semi-space-size'];
      const known = new Set([...[...cli, ...dump, ...imports].flatMap((o) => [`--${o.name}`, ...(o.short === null ? [] : [`-${o.short}`])]), ...node]);
      const mentioned = new Set([...text.matchAll(/(?<![\w-])(--?[A-Za-z][a-z-]*)(?![\w-])/g)].map((m) => m[1]!));
      expect([...mentioned].filter((f) => !known.has(f))).to.deep.equal([]);
      expect(mentioned.size).to.be.greaterThan(cli.length);
    });

    it('names every startup error', () => {
      const union = /type StartupErrorName =([^;]+);/.exec(source('lib/errors.ts'));
      const names = [...union![1]!.matchAll(/'([A-Za-z]+)'/g)].map((m) => m[1]!);
      expect(names).to.include('InvalidValue');
      const status = section(rendered('man/tickd.8'), 'EXIT STATUS');
      for (const name of names) expect(status, name).to.include(name);
    });

    it('documents exactly the TICKD_* variables the code uses', () => {
      // lib/ctl's variables are the client's, documented in tickd-ctl(1) (test/integration/ctl-man.test.ts).
      const daemonFiles = ['lib', 'cluster'].flatMap(sourceFiles).filter((f) => !f.startsWith('lib/ctl/'));
      const used = new Set(daemonFiles.flatMap((f) => [...source(f).matchAll(/\bTICKD_[A-Z_]+\b/g)].map((m) => m[0])));
      expect(used.size).to.be.greaterThan(0);
      const env = tags(section(rendered('man/tickd.8'), 'ENVIRONMENT')).filter((t) => t.startsWith('TICKD_'));
      expect(new Set(env)).to.deep.equal(used);
    });
  });

  describe('tickd.toml(5)', () => {
    it('has one entry per SCHEMA key, with its type and default, and no other', () => {
      const documented = documentedKeys();
      const expected = new Map<string, { type: string; default: string }>();
      for (const [name, keys] of Object.entries(SCHEMA)) {
        for (const [key, def] of Object.entries(keys as Record<string, KeyDef>)) {
          expected.set(`${name}.${key}`, { type: TYPE_WORDS[def.type], default: defaultText(def) });
        }
      }
      expect(Object.fromEntries(documented)).to.deep.equal(Object.fromEntries(expected));
    });

    it('names only existing keys in any page', () => {
      const sections = Object.keys(SCHEMA).join('|');
      for (const page of PAGES) {
        const text = rendered(page);
        // Not a file name (tickd-cluster.service, /etc/tickd/cluster.secret) nor a metric (tickd.cluster.role): no key follows a hyphen, a slash or a dot.
        const dotted = [...text.matchAll(new RegExp(`(?<![-\\w/.])(${sections})\\.([a-z_]+)\\b`, 'g'))];
        const bracketed = [...text.matchAll(/\[([a-z]+)\] ([a-z_]+)/g)];
        for (const m of [...dotted, ...bracketed]) {
          const keys = (SCHEMA as Record<string, Record<string, KeyDef>>)[m[1]!];
          expect(keys !== undefined && Object.hasOwn(keys, m[2]!), `${page}: ${m[0]}`).to.equal(true);
        }
      }
    });

    it('describes the configuration and token file errors', () => {
      const errors = tags(section(rendered('man/tickd.toml.5'), 'ERRORS'));
      for (const name of ['InvalidLogLevel', 'FramerateOutOfRange', 'UnknownSection', 'UnknownKey', 'InvalidValue', 'MissingSecret', 'EmptyNamespace', 'DuplicateSecret']) {
        expect(errors, name).to.include(name);
      }
    });
  });

  describe('tickd-protocol(7)', () => {
    const text = HAS_GROFF ? rendered('man/tickd-protocol.7') : '';

    it('documents every instruction the parser knows', () => {
      const parse = source('lib/protocol/parse.ts');
      const cases = [...parse.matchAll(/case '([A-Z]+)':/g)].map((m) => (m[1] === 'RULE' ? 'RULE SET' : m[1]!));
      expect(cases).to.include.members(['SET', 'GET', 'QUERY', 'LISTRULES', 'STAT', 'REMOVE', 'REMOVERULE', 'RULE SET']);
      const commands = tags(section(text, 'COMMANDS'));
      expect(commands.some((t) => t.startsWith('AUTH secret'))).to.equal(true);
      for (const c of cases) expect(commands.some((t) => t.startsWith(`id ${c}`)), c).to.equal(true);
    });

    it('documents every runner kind, HTTP method and redis command', () => {
      const runners = tags(section(text, 'RUNNERS'));
      for (const kind of RUNNER_TYPES) expect(runners.some((t) => t.startsWith(`${kind} `)), kind).to.equal(true);
      for (const word of [...HTTP_METHODS, ...REDIS_COMMANDS]) expect(section(text, 'RUNNERS'), word).to.match(new RegExp(`\\b${word}\\b`));
    });

    it('lists the STAT keys', () => {
      const stats = section(text, 'STATISTICS');
      expect(stats).to.include(`these ${STAT_KEYS.length} keys`);
      const listed = tags(stats).filter((t) => /^[a-z_]+(, [a-z_]+)*$/.test(t)).flatMap((t) => t.split(', '));
      expect(listed).to.deep.equal([...STAT_KEYS]);
    });

    it('lists the error codes', () => {
      expect(tags(section(text, 'ERRORS'))).to.deep.equal(Object.keys(ERRORS));
    });

    it('states the limits the code enforces', () => {
      expect(text).to.include(`at most ${MAX_LINE_BYTES} bytes`);
      expect(text).to.include(`1 to ${MAX_IDENTIFIER_BYTES} bytes`);
      expect(text).to.include(`within ${AUTH_DEADLINE_MS / 1000} seconds`);
    });

    it('lists exactly the HTTP routes served', () => {
      const served = routes({ dispatch: () => Promise.reject(new Error('unused')), readiness: () => 'ready', tokens: null, version, cluster: true })
        .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
      const documented = tags(section(text, 'HTTP INTERFACE'))
        .filter((t) => /^(GET|PUT|POST|DELETE|PATCH|HEAD) \//.test(t))
        .map((t) => t.replace(/\[\?.*\]$/, ''));
      expect([...documented].sort()).to.deep.equal([...served].sort());
    });
  });
});
