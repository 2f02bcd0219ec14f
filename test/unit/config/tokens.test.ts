import { expect } from 'chai';
import { parseTokens } from '../../../lib/config/tokens.ts';
import { StartupError } from '../../../lib/errors.ts';

function nameOf(text: string): string {
  try {
    parseTokens(text, 'tokens.toml');
  } catch (err) {
    expect(err).to.be.instanceOf(StartupError);
    return (err as StartupError).name;
  }
  return 'accepted';
}

describe('config/tokens', () => {
  it('reads tokens with their namespaces', () => {
    const t = parseTokens('[token.admin]\nsecret = "s1"\nnamespace = "*"\n[token.a]\nsecret = "s2"\nnamespace = "a."\n', 'f');
    expect(t).to.deep.equal([{ name: 'admin', secret: 's1', namespace: '*' }, { name: 'a', secret: 's2', namespace: 'a.' }]);
  });
  it('accepts an empty file (no tokens: nobody can authenticate)', () => {
    expect(parseTokens('', 'f')).to.deep.equal([]);
  });
  it('MissingSecret', () => expect(nameOf('[token.a]\nnamespace = "a."')).to.equal('MissingSecret'));
  it('MissingSecret for an empty secret', () => expect(nameOf('[token.a]\nsecret = ""\nnamespace = "a."')).to.equal('MissingSecret'));
  it('EmptyNamespace when missing', () => expect(nameOf('[token.a]\nsecret = "x"')).to.equal('EmptyNamespace'));
  it('EmptyNamespace when empty', () => expect(nameOf('[token.a]\nsecret = "x"\nnamespace = ""')).to.equal('EmptyNamespace'));
  it('DuplicateSecret', () => expect(nameOf('[token.a]\nsecret = "x"\nnamespace = "a."\n[token.b]\nsecret = "x"\nnamespace = "b."')).to.equal('DuplicateSecret'));
  it('rejects unknown keys and sections', () => {
    expect(nameOf('[token.a]\nsecret = "x"\nnamespace = "a."\nrole = "admin"')).to.equal('UnknownKey');
    expect(nameOf('[tokens.a]\nsecret = "x"\nnamespace = "a."')).to.equal('UnknownSection');
  });
  it('rejects text that is not TOML', () => expect(nameOf('[token.a\nsecret')).to.equal('InvalidValue'));
});
