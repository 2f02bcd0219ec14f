// The console's place in a paged listing (lib/http/ui/console/pager.js): a stack of cursors,
// the next one from the last answer, and the "Page n · rows a–b" line.
import { expect } from 'chai';

interface PagerInstance {
  readonly limit: number;
  readonly cursor: string | null;
  readonly index: number;
  readonly hasPrevious: boolean;
  readonly hasNext: boolean;
  reset(): void;
  answered(next: string | null): void;
  forward(): boolean;
  back(): boolean;
  describe(shown: number): string;
}
type PagerClass = new (limit: number) => PagerInstance;

const MODULE = new URL('../../../../../lib/http/ui/console/pager.js', import.meta.url).href;

describe('http/ui/console/pager.js', () => {
  let Pager: PagerClass;
  before(async () => {
    Pager = ((await import(MODULE)) as { Pager: PagerClass }).Pager;
  });

  it('walks forward on the cursors the server gave and back on the stack', () => {
    const p = new Pager(100);
    expect([p.cursor, p.index, p.hasPrevious, p.hasNext]).to.deep.equal([null, 0, false, false]);
    expect(p.forward()).to.equal(false); // no answer yet: no next page known
    p.answered('100');
    expect(p.hasNext).to.equal(true);
    expect(p.describe(100)).to.equal('Page 1 · rows 1–100');
    expect(p.forward()).to.equal(true);
    expect([p.cursor, p.index, p.hasPrevious, p.hasNext]).to.deep.equal(['100', 1, true, false]);
    p.answered('250');
    expect(p.forward()).to.equal(true);
    p.answered(null);
    expect(p.describe(37)).to.equal('Page 3 · rows 201–237 (last page)');
    expect(p.forward()).to.equal(false);
    expect(p.back()).to.equal(true);
    expect(p.cursor).to.equal('100');
    expect(p.hasNext).to.equal(false); // until the page is asked again
    expect(p.back()).to.equal(true);
    expect(p.cursor).to.equal(null);
    expect(p.back()).to.equal(false);
  });

  it('reset goes back to the first page; an empty page says so', () => {
    const p = new Pager(50);
    p.answered('50');
    p.forward();
    p.reset();
    expect([p.cursor, p.index, p.hasNext]).to.deep.equal([null, 0, false]);
    expect(p.describe(0)).to.equal('Page 1 · no rows (last page)');
  });
});
