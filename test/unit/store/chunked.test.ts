import { expect } from 'chai';
import { Chunked } from '../../../lib/store/chunked.ts';

describe('store/chunked', () => {
  it('holds what was pushed and set, across chunks, in push order', () => {
    const c = new Chunked<string>('');
    const n = 3 * 4096 + 5;
    for (let i = 0; i < n; i++) expect(c.push(`v${i}`)).to.equal(i);
    expect(c.length).to.equal(n);
    expect([0, 4095, 4096, 8191, 8192, n - 1].map((i) => c.get(i))).to.deep.equal(['v0', 'v4095', 'v4096', 'v8191', 'v8192', `v${n - 1}`]);
    c.set(4096, 'x');
    expect(c.get(4096)).to.equal('x');
    expect(c.get(4095)).to.equal('v4095');
  });

  it('starts each entry as its empty value, and clear() forgets everything', () => {
    const c = new Chunked<number | undefined>(undefined);
    c.push(1);
    c.push(2);
    c.clear();
    expect(c.length).to.equal(0);
    expect(c.push(7)).to.equal(0);
    expect(c.get(0)).to.equal(7);
  });
});
