// The execution queue (lib/domain/fifo.ts): first in, first out across its compactions.
import { expect } from 'chai';
import { Fifo } from '../../../lib/domain/fifo.ts';

describe('runner fifo', () => {
  it('gives items back in order across compactions, interleaved with pushes', () => {
    const q = new Fifo<number>();
    let pushed = 0;
    let taken = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 700; i++) q.push(pushed++);
      for (let i = 0; i < 500; i++) expect(q.shift()).to.equal(taken++);
      expect(q.length).to.equal(pushed - taken);
    }
    while (q.length > 0) expect(q.shift()).to.equal(taken++);
    expect(taken).to.equal(pushed);
    expect(q.shift()).to.equal(undefined);
  });

  it('clear() empties it', () => {
    const q = new Fifo<string>();
    q.push('a');
    q.push('b');
    q.clear();
    expect(q.length).to.equal(0);
    expect(q.shift()).to.equal(undefined);
  });
});
