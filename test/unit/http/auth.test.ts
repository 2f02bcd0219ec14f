import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { bearerSecret, principalOf } from '../../../lib/http/auth.ts';
import { buildTokenTable, OPEN_ACCESS } from '../../../lib/auth/verify.ts';

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
