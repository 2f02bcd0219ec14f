import { expect } from 'chai';
import { toJson } from '../../../lib/http/json.ts';

describe('http/json toJson', () => {
  it('writes bigints as their exact digits', () => {
    expect(toJson({ execution: 1775822400123456789n })).to.equal('{"execution":1775822400123456789}');
    expect(toJson(-(1n << 63n))).to.equal('-9223372036854775808');
  });

  it('matches JSON.stringify for bigint-free values', () => {
    const value = { a: 'quote " backslash \\ nl \n \u2028 é', b: [1, 2.5, -0, true, false, null], c: { d: [] }, e: '' };
    expect(toJson(value)).to.equal(JSON.stringify(value));
  });

  it('omits undefined members and writes non-finite numbers as null', () => {
    expect(toJson({ a: undefined, b: Number.NaN, c: Infinity })).to.equal('{"b":null,"c":null}');
  });

  it('escapes keys', () => {
    expect(toJson({ 'a"b': 1 })).to.equal('{"a\\"b":1}');
  });

  it('round-trips nested arrays of objects with bigints', () => {
    const text = toJson([{ id: 'a', execution: 9007199254740993n }]);
    expect(text).to.equal('[{"id":"a","execution":9007199254740993}]');
    expect(JSON.parse(text.replace(/(\d{16,})/, '"$1"'))).to.deep.equal([{ id: 'a', execution: '9007199254740993' }]);
  });
});
