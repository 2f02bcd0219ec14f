// man/tickd-ctl.1 renders without a warning and documents exactly what lib/ctl has, so neither
// can drift: the commands of command-list.ts (each as its synopsis, in order, and no other),
// every option of args.ts and no flag the code lacks, the TICKD_* variables lib/ctl reads, and
// the exit statuses of errors.ts. The page is installed with the others (package.json "man").
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CTL_OPTIONS, type OptionInfo } from '../../lib/ctl/args.ts';
import { COMMANDS, synopsis } from '../../lib/ctl/command-list.ts';
import { EXIT_CONNECTION, EXIT_DAEMON, EXIT_OK, EXIT_USAGE } from '../../lib/ctl/errors.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = join(ROOT, 'man/tickd-ctl.1');
const HAS_GROFF = spawnSync('groff', ['--version']).status === 0;

function rendered(): string {
  const r = spawnSync('groff', ['-man', '-Tascii', '-P-c', '-P-b', '-P-o', '-P-u', '-rHY=0', '-rLL=250n', PAGE], { encoding: 'utf8' });
  expect(r.status, r.stderr).to.equal(0);
  return r.stdout;
}

function section(text: string, heading: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l === heading);
  expect(start, `section ${heading}`).to.be.greaterThan(-1);
  const end = lines.findIndex((l, i) => i > start && /^[A-Z]/.test(l));
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** Tag lines of a .TP list: indented by exactly 7 spaces (a short tag shares its line with the text). */
function tags(text: string): string[] {
  return text.split('\n').filter((l) => /^ {7}\S/.test(l)).map((l) => l.trim().split(/ {2,}/)[0]!);
}

describe('man/tickd-ctl.1', function () {
  before(function () {
    if (!HAS_GROFF) this.skip();
  });

  it('renders with no groff warning', () => {
    const r = spawnSync('groff', ['-man', '-ww', '-z', PAGE], { encoding: 'utf8' });
    expect(r.status).to.equal(0);
    expect(r.stderr).to.equal('');
  });

  it('names the package version and is installed with the other pages', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; man: string[] };
    expect(readFileSync(PAGE, 'utf8')).to.match(new RegExp(`^\\.TH TICKD\\\\-CTL 1 .* "tickd ${pkg.version.replace(/\./g, '\\.')}"`, 'm'));
    expect(pkg.man).to.include('./man/tickd-ctl.1');
    for (const page of readdirSync(join(ROOT, 'man'))) expect(pkg.man, page).to.include(`./man/${page}`);
  });

  it('COMMANDS lists exactly the commands of the code, in order, each with its arguments', () => {
    expect(tags(section(rendered(), 'COMMANDS'))).to.deep.equal(COMMANDS.map(synopsis));
  });

  it('OPTIONS documents every option with its value, and the page mentions no flag the code lacks', () => {
    const text = rendered();
    const documented = section(text, 'OPTIONS').split('\n').filter((l) => /^ {7}-/.test(l)).map((l) => l.trim());
    const options = Object.entries(CTL_OPTIONS as Record<string, OptionInfo>);
    for (const [name, o] of options) {
      const tag = `${o.short === undefined ? '' : `-${o.short}, `}--${name}${o.value === undefined ? '' : ` ${o.value}`}`;
      // A short tag shares its line with the text that follows it.
      expect(documented.some((l) => l === tag || l.startsWith(`${tag} `)), tag).to.equal(true);
    }
    expect(documented).to.have.length(options.length);
    const known = new Set(options.flatMap(([n, o]) => [`--${n}`, ...(o.short === undefined ? [] : [`-${o.short}`])]));
    // Words of runners and of other programs in the examples are not ctl's options.
    const foreign = new Set(['--input', '-c', '-r']);
    const mentioned = new Set([...text.matchAll(/(?<![\w-])(--?[A-Za-z][a-z-]*)(?![\w-])/g)].map((m) => m[1]!));
    expect([...mentioned].filter((f) => !known.has(f) && !foreign.has(f))).to.deep.equal([]);
  });

  it('ENVIRONMENT lists exactly the TICKD_* variables lib/ctl reads, and NO_COLOR', () => {
    const dir = join(ROOT, 'lib/ctl');
    const used = new Set(readdirSync(dir).flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/\bTICKD_[A-Z_]+\b/g)].map((m) => m[0])));
    expect(used.size).to.be.greaterThan(5);
    const env = tags(section(rendered(), 'ENVIRONMENT'));
    expect(new Set(env.filter((t) => t.startsWith('TICKD_')))).to.deep.equal(used);
    expect(env).to.include('NO_COLOR');
  });

  it('EXIT STATUS gives the four statuses of the code', () => {
    expect(tags(section(rendered(), 'EXIT STATUS')).filter((t) => /^\d+$/.test(t))).to.deep.equal([EXIT_OK, EXIT_DAEMON, EXIT_USAGE, EXIT_CONNECTION].map(String));
  });
});
