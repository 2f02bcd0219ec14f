// The FIFO of lib/domain/fifo.ts: first in, first out across its compactions.
import { expect } from 'chai';
import { Fifo } from '../../../lib/domain/fifo.ts';

describe('fifo', () => {
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

  it('peek() shows the oldest without taking it; drain() takes all, oldest first', () => {
    const q = new Fifo<number>();
    expect(q.peek()).to.equal(undefined);
    for (let i = 0; i < 3000; i++) q.push(i);
    for (let i = 0; i < 2000; i++) q.shift(); // past a compaction
    expect(q.peek()).to.equal(2000);
    expect(q.length).to.equal(1000);
    const all = q.drain();
    expect(all).to.have.length(1000);
    expect(all[0]).to.equal(2000);
    expect(all.at(-1)).to.equal(2999);
    expect(q.length).to.equal(0);
    expect(q.peek()).to.equal(undefined);
  });
});
