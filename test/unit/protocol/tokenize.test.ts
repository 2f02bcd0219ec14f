// Tokenizer: space separation, quoting, escapes, malformed quotes.
import { expect } from 'chai';
import { tokenize } from '../../../lib/protocol/tokenize.ts';

describe('protocol/tokenize', () => {
  it('splits on spaces, collapsing runs and ignoring leading/trailing spaces', () => {
    expect(tokenize('1 SET a 5')).to.deep.equal(['1', 'SET', 'a', '5']);
    expect(tokenize('  1   SET  a 5  ')).to.deep.equal(['1', 'SET', 'a', '5']);
    expect(tokenize('')).to.deep.equal([]);
    expect(tokenize('    ')).to.deep.equal([]);
  });

  it('treats tabs and other characters as ordinary', () => {
    expect(tokenize('a\tb c')).to.deep.equal(['a\tb', 'c']);
    expect(tokenize('a\rb')).to.deep.equal(['a\rb']);
  });

  it('keeps backslashes literal outside quotes', () => {
    expect(tokenize('x C:\\dir\\f a\\')).to.deep.equal(['x', 'C:\\dir\\f', 'a\\']);
    // Outside quotes \" is a literal backslash followed by an opening quote.
    expect(tokenize('a\\"b c"')).to.deep.equal(['a\\b c']);
    expect(tokenize('a\\"')).to.equal(null);
  });

  it('groups a quoted argument with spaces', () => {
    expect(tokenize('r SET j "2026-04-10 12:00:00"')).to.deep.equal(['r', 'SET', 'j', '2026-04-10 12:00:00']);
    expect(tokenize('"a  b"')).to.deep.equal(['a  b']);
  });

  it('unescapes \\" and \\\\ inside quotes, and any escaped character', () => {
    expect(tokenize('"echo \\"hi\\" > /dev/null"')).to.deep.equal(['echo "hi" > /dev/null']);
    expect(tokenize('"a\\\\b"')).to.deep.equal(['a\\b']);
    expect(tokenize('"\\x\\ "')).to.deep.equal(['x ']);
    expect(tokenize('"\\\\"')).to.deep.equal(['\\']);
  });

  it('gives an empty argument for ""', () => {
    expect(tokenize('a "" b')).to.deep.equal(['a', '', 'b']);
    expect(tokenize('""')).to.deep.equal(['']);
    expect(tokenize('a ""')).to.deep.equal(['a', '']);
  });

  it('joins quoted sections with adjacent text into one argument (shell-like)', () => {
    expect(tokenize('a"b c"d')).to.deep.equal(['ab cd']);
    expect(tokenize('--input msg="hello world"')).to.deep.equal(['--input', 'msg=hello world']);
    expect(tokenize('"a""b"')).to.deep.equal(['ab']);
    expect(tokenize('x"" y')).to.deep.equal(['x', 'y']);
  });

  it('returns null for an unterminated quote', () => {
    expect(tokenize('u4 GET "unterminated')).to.equal(null);
    expect(tokenize('"')).to.equal(null);
    expect(tokenize('"abc\\"')).to.equal(null);
    expect(tokenize('"abc\\')).to.equal(null);
    expect(tokenize('a"b')).to.equal(null);
  });

  it('keeps non-ASCII text, including an escaped astral character', () => {
    expect(tokenize('"é 😀" \\😀')).to.deep.equal(['é 😀', '\\😀']);
    expect(tokenize('"\\😀"')).to.deep.equal(['😀']);
  });
});
