import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { bearerSecret, principalOf } from '../../../lib/http/auth.ts';
import { buildTokenTable, OPEN_ACCESS } from '../../../lib/auth/verify.ts';
import { prng } from '../../helpers/prng.ts';

const req = (authorization?: string): IncomingMessage => ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;

describe('http/auth', () => {
  const table = buildTokenTable([
    { name: 'a', secret: 'secret-a', namespace: 'a.' },
    { name: 'b', secret: 'with space', namespace: '*' },
  ]);

  it('extracts the secret of a Bearer header, scheme case-insensitive', () => {
    expect(bearerSecret('Bearer abc')).to.equal('abc');
    expect(bearerSecret('bearer   abc  ')).to.equal('abc');
    expect(bearerSecret('BEARER a b')).to.equal('a b');
  });

  it('has no secret for other schemes or an empty one', () => {
    for (const h of [undefined, '', 'Bearer', 'Bearer ', 'Basic YTpi', 'Bearerabc', 'Token abc']) {
      expect(bearerSecret(h), String(h)).to.equal(null);
    }
  });

  it('trims spaces and tabs on both sides, keeps inner ones, and needs one after the scheme', () => {
    expect(bearerSecret('bEaReR\t \tx \t y\t \t')).to.equal('x \t y');
    expect(bearerSecret('Bearer \t \t')).to.equal(null);
    expect(bearerSecret('Bearer\tabc')).to.equal('abc');
    expect(bearerSecret('Bearer\u00a0abc'), 'only space and tab separate').to.equal(null);
    expect(bearerSecret(`Bearer x${' '.repeat(16000)}y`)).to.equal(`x${' '.repeat(16000)}y`);
  });

  it('agrees with the grammar /^bearer[ \\t]+(.*?)[ \\t]*$/i on random headers', () => {
    // The old regex is the specification; on short inputs its backtracking costs nothing.
    const grammar = /^bearer[ \t]+(.*?)[ \t]*$/i;
    const oracle = (h: string): string | null => { const m = grammar.exec(h); return m === null || m[1] === '' ? null : m[1]!; };
    const pieces = ['Bearer', 'bearer', 'BEARER', 'bEARER', 'Basic', ' ', ' ', '\t', 'a', 'Z', 'é', '\u0130', '\n', '\r', '\u2028', '=', '"', 'bear'];
    const random = prng(0x5eed);
    for (let i = 0; i < 20000; i++) {
      let h = random() < 0.8 ? pieces[Math.floor(random() * 4)]! : '';
      const n = Math.floor(random() * 8);
      for (let k = 0; k < n; k++) h += pieces[Math.floor(random() * pieces.length)]!;
      expect(bearerSecret(h), JSON.stringify(h)).to.equal(oracle(h));
    }
  });

  it('maps a known secret to its principal and anything else to null', () => {
    expect(principalOf(req('Bearer secret-a'), table)).to.deep.equal({ name: 'a', namespace: 'a.' });
    expect(principalOf(req('Bearer with space'), table)).to.deep.equal({ name: 'b', namespace: '*' });
    expect(principalOf(req('Bearer secret-b'), table)).to.equal(null);
    expect(principalOf(req('Bearer secret-a '.repeat(2)), table)).to.equal(null);
    expect(principalOf(req(), table)).to.equal(null);
  });

  it('is open access without a token table', () => {
    expect(principalOf(req(), null)).to.equal(OPEN_ACCESS);
  });
});
