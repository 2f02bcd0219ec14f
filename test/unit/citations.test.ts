// Citations a reader of the repository can open. Comments and pages cite the manual pages by
// page and section (`tickd-protocol(7) COMMANDS`, `tickd.toml(5) [database]`,
// `tickd-protocol(7) "Identifiers and patterns"`) and the pages under doc/
// (`doc/logfile-format.md`). Nothing may cite a document kept outside the repository, and
// every cited page and section must exist, so a citation never leads nowhere. This file is
// the one place that names the outside documents, so it is not scanned.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SELF = relative(ROOT, fileURLToPath(import.meta.url));
const SCANNED = ['lib', 'cluster', 'bin', 'test', 'bench', 'etc', 'man', 'doc', 'README.md'];
const PAGES: Record<string, string> = {
  'tickd(8)': 'man/tickd.8',
  'tickd.toml(5)': 'man/tickd.toml.5',
  'tickd-protocol(7)': 'man/tickd-protocol.7',
  'tickd-ctl(1)': 'man/tickd-ctl.1',
};

/** Every text file under the scanned roots, repository-relative (binary fixtures left out). */
function files(rel: string): string[] {
  const abs = join(ROOT, rel);
  if (!existsSync(abs)) return [];
  // A test tool's installed packages (test/tools/*/node_modules) are not ours to check.
  if (statSync(abs).isDirectory()) return readdirSync(abs).sort().filter((name) => name !== 'node_modules').flatMap((name) => files(join(rel, name)));
  return readFileSync(abs).includes(0) ? [] : [rel];
}

const TEXTS: ReadonlyMap<string, string> = new Map(
  SCANNED.flatMap(files).filter((f) => f !== SELF).map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]),
);

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** Where `re` matches in the scanned files: `file:line`, and the match. */
function hits(re: RegExp, keep: (m: RegExpExecArray, text: string) => boolean = () => true): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [file, text] of TEXTS) {
    for (const m of text.matchAll(new RegExp(re.source, `${re.flags.replace('g', '')}g`))) {
      if (keep(m, text)) out.push([`${file}:${lineOf(text, m.index)}`, m[0]]);
    }
  }
  return out;
}

/** The .SH and .SS headings of a manual page, as a reader sees them. */
function headings(page: string): string[] {
  const src = readFileSync(join(ROOT, page), 'utf8');
  return [...src.matchAll(/^\.S[HS] +(.+)$/gm)].map((m) => m[1]!.trim().replace(/^"(.*)"$/, '$1').replace(/\\-/g, '-'));
}

/**
 * Checks the sections named after one citation of a page: `PAGE SECTION`, then any more joined
 * by `,` or `and`. A section is a quoted name, a `[table]` of tickd.toml(5), or a heading in
 * capitals written as it stands. Returns what is wrong, or null.
 */
function checkSections(page: string, after: string): string | null {
  const known = headings(PAGES[page]!);
  let rest = after;
  for (;;) {
    const split = /^\n\s*(?:\/\/|\*|#)?\s*(?=[A-Z]{2}|"|\[[a-z])/.exec(rest);
    if (split) return `${page}: the section is on the next line; keep a citation on one line`;
    if (!rest.startsWith(' ')) return null;
    const s = rest.slice(1);
    let name: string;
    if (s.startsWith('"')) {
      name = s.slice(1, s.indexOf('"', 1));
      rest = s.slice(name.length + 2);
    } else if (/^\[[a-z]/.test(s)) {
      name = s.slice(0, s.indexOf(']') + 1);
      rest = s.slice(name.length);
    } else if (/^[A-Z]/.test(s)) {
      const whole = known.filter((h) => s.startsWith(h) && !/[\w-]/.test(s[h.length] ?? ''));
      if (whole.length === 0) return `${page} has no section ${/^[A-Z][\w-]*(?: [A-Z][A-Z\w-]+)*/.exec(s)![0]}`;
      name = whole.reduce((a, b) => (b.length > a.length ? b : a));
      rest = s.slice(name.length);
    } else {
      return null;
    }
    if (!known.includes(name)) return `${page} has no section ${name}`;
    const joined = /^(?:, and|,| and)(?= )/.exec(rest);
    if (joined === null) return null;
    rest = rest.slice(joined[0].length);
  }
}

describe('citations', () => {
  it('reads the files it checks', () => {
    expect(TEXTS.size).to.be.greaterThan(100);
    expect([...TEXTS.keys()].some((f) => f.startsWith('lib/'))).to.equal(true);
  });

  it('cites no document kept outside the repository', () => {
    // A section sign without a document's name before it (a citation continued from the
    // previous line, or a second section of the same document) counts too; RFCs are fine.
    const named = /(RFC \d+ |decisions ?)$/;
    const bare = (m: RegExpExecArray, text: string) => !named.test(text.slice(Math.max(0, m.index - 12), m.index));
    const outside = new Map<string, string>();
    const cited = [...hits(/decisions ?§ ?\d+|decisions\.md|interface\.md/), ...hits(/§ ?\d+/, bare)];
    for (const [at, what] of cited) {
      outside.set(at, outside.has(at) ? `${outside.get(at)}, ${what}` : `${at}: ${what}`);
    }
    const found = [...outside.values()];
    expect(found, `cite the man pages or doc/ instead:\n${found.join('\n')}\n`).to.deep.equal([]);
  });

  it('cites only doc/ pages that exist', () => {
    const cited = hits(/\bdoc\/[\w.-]+\.md\b/);
    expect(cited.length, 'doc/ citations found').to.be.greaterThan(0);
    const missing = cited.filter(([, page]) => !existsSync(join(ROOT, page))).map(([at, page]) => `${at}: ${page}`);
    expect(missing, missing.join('\n')).to.deep.equal([]);
  });

  it('cites only manual sections that exist', () => {
    for (const page of Object.values(PAGES)) expect(headings(page).length, page).to.be.greaterThan(5);
    const wrong: string[] = [];
    let checked = 0;
    for (const [file, text] of TEXTS) {
      for (const m of text.matchAll(/\b(tickd(?:\.toml|-protocol|-ctl)?\(\d\))/g)) {
        checked++;
        const problem = checkSections(m[1]!, text.slice(m.index + m[0].length, m.index + m[0].length + 200));
        if (problem !== null) wrong.push(`${file}:${lineOf(text, m.index)}: ${problem}`);
      }
    }
    expect(checked).to.be.greaterThan(50);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('links between markdown pages resolve', () => {
    const broken: string[] = [];
    for (const [file, text] of TEXTS) {
      if (!file.endsWith('.md')) continue;
      for (const m of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(join(ROOT, dirname(file), target))) broken.push(`${file}:${lineOf(text, m.index)}: ${target}`);
      }
    }
    expect(broken, broken.join('\n')).to.deep.equal([]);
  });
});
