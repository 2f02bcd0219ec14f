// etc/tickd.toml must load, equal the defaults, and show every schema key (drift check).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parseConfig } from '../../../lib/config/load.ts';
import { SCHEMA } from '../../../lib/config/schema.ts';

const SAMPLE = readFileSync(new URL('../../../etc/tickd.toml', import.meta.url), 'utf8');

describe('etc/tickd.toml', () => {
  it('loads and equals the built-in defaults', () => {
    const { source: _a, ...sample } = parseConfig(SAMPLE, 'etc/tickd.toml');
    const { source: _b, ...defaults } = parseConfig('', null);
    expect(sample).to.deep.equal(defaults);
  });
  for (const [section, keys] of Object.entries(SCHEMA)) {
    for (const [key, def] of Object.entries(keys)) {
      it(`shows ${section}.${key} with its default and a comment`, () => {
        const body = SAMPLE.split(/^\[/m).find((s) => s.startsWith(`${section}]`));
        expect(body, `[${section}] section`).to.be.a('string');
        const line = body!.split('\n').find((l) => new RegExp(`^(# )?${key} = `).test(l));
        expect(line, `${section}.${key}`).to.be.a('string');
        if (def.default === null) expect(line!.startsWith('# '), 'unset keys are commented out').to.equal(true);
        else expect(line!.slice(line!.indexOf('= ') + 2)).to.equal(JSON.stringify(def.default).replace(/,/g, ', '));
        const lines = body!.split('\n');
        expect(lines[lines.indexOf(line!) - 1]!.startsWith('#'), 'preceded by a comment').to.equal(true);
      });
    }
  }
});
