import { expect } from 'chai';
import { authenticate, buildTokenTable } from '../../../lib/auth/verify.ts';

describe('auth/verify', () => {
  const table = buildTokenTable([
    { name: 'admin', secret: 'root-secret', namespace: '*' },
    { name: 'a', secret: 'a-secret', namespace: 'a.' },
  ]);
  it('finds the principal of a known secret, without the secret', () => {
    expect(authenticate(table, 'a-secret')).to.deep.equal({ name: 'a', namespace: 'a.' });
    expect(authenticate(table, 'root-secret')).to.deep.equal({ name: 'admin', namespace: '*' });
  });
  it('refuses unknown, empty, prefix and longer secrets', () => {
    for (const s of ['nope', '', 'a-secre', 'a-secrett', 'A-SECRET']) expect(authenticate(table, s)).to.equal(null);
  });
});
