// Paged listings' scan (lib/domain/page.ts): a page holds at most `limit` entries, examines at
// most SCAN_PER_PAGE slots, and its `next` cursor resumes exactly where it stopped.
import { expect } from 'chai';
import { MAX_PAGE_ENTRIES, pageLimit, SCAN_PER_PAGE, scanSlots } from '../../../lib/domain/page.ts';

const evens = (slot: number): number | undefined => (slot % 2 === 0 ? slot : undefined);

describe('domain/page', () => {
  it('collects up to limit entries and resumes after the last slot examined', () => {
    expect(scanSlots(10, 0, 3, evens)).to.deep.equal({ items: [0, 2, 4], next: 5 });
    expect(scanSlots(10, 5, 3, evens)).to.deep.equal({ items: [6, 8], next: null });
    expect(scanSlots(0, 0, 3, evens)).to.deep.equal({ items: [], next: null });
  });

  it('examines at most SCAN_PER_PAGE slots: a selective filter gives short pages, never a long scan', () => {
    let examined = 0;
    const none = (): undefined => { examined++; return undefined; };
    const first = scanSlots(3 * SCAN_PER_PAGE, 0, 10, none);
    expect(first).to.deep.equal({ items: [], next: SCAN_PER_PAGE });
    expect(examined).to.equal(SCAN_PER_PAGE);
  });

  it('clamps a limit and a cursor from an untrusted caller', () => {
    expect(pageLimit(0)).to.equal(1);
    expect(pageLimit(1e9)).to.equal(MAX_PAGE_ENTRIES);
    expect(pageLimit(2.5)).to.equal(1);
    expect(scanSlots(4, -3, 2, evens)).to.deep.equal({ items: [0, 2], next: 3 });
    expect(scanSlots(4, Number.NaN, 1, evens)).to.deep.equal({ items: [0], next: 1 });
  });
});
