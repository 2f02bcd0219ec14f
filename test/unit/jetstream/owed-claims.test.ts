import { expect } from 'chai';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { claimsText, readClaims, type Claim } from '../../../lib/jetstream/owed-claims.ts';

const job = (id: string, execution = 5n): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });

describe('owed claims: what a node owes the stream, in its report', () => {
  it('reads back what it wrote: sequence, subject, certainty and the record', () => {
    const claims: Claim[] = [
      { seq: 7, subject: 'c.j.a', owed: job('a', 4000000000000000001n), certain: true },
      { seq: 9, subject: 'c.r.b', owed: { t: 'rule.removed', id: 'b' }, certain: false },
    ];
    expect(readClaims(claimsText(claims)!)).to.deep.equal(claims);
    expect(claimsText([])).to.equal(null);
  });

  it('tells 500 at most, within 256 KiB: the rest in later reports', () => {
    const many = Array.from({ length: 600 }, (_, k): Claim => ({ seq: k + 1, subject: `c.j.${k}`, owed: job(String(k)), certain: false }));
    expect(readClaims(claimsText(many)!)).to.have.length(500);
    const big = Array.from({ length: 100 }, (_, k): Claim => ({ seq: k + 1, subject: `c.j.${k}`, owed: job('x'.repeat(4000) + k), certain: false }));
    const text = claimsText(big)!;
    expect(text.length).to.be.at.most(256 * 1024);
    expect(readClaims(text).length).to.be.within(40, 99);
  });

  it('leaves out what does not read, and never throws', () => {
    const good = JSON.parse(claimsText([{ seq: 3, subject: 'c.j.a', owed: job('a'), certain: false }])!) as unknown[];
    const text = JSON.stringify([...good, [0, 'c.j.b', 0, ''], [4, 5, 0, ''], [4, 'c.j.c', 2, ''], [4, 'c.j.d', 1, 'AAAA'], 'x', null, [4, 'x'.repeat(2000), 1, ''], [1.5, 'c.j.e', 0, '']]);
    expect(readClaims(text).map((c) => c.subject)).to.deep.equal(['c.j.a']);
    for (const junk of ['', '{', 'null', '{}', '"x"', '[[]]', 'x'.repeat(300 * 1024)]) expect(readClaims(junk)).to.deep.equal([]);
  });
});
