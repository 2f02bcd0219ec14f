import { expect } from 'chai';
import { validateIdentifier } from '../../../lib/domain/identifier.ts';
import { parseIsoTimestamp } from '../../../lib/domain/time.ts';
import { jitterOf, occurrenceId } from '../../../lib/schedule/occurrence.ts';
import { MAX_SCHEDULE_ID_BYTES } from '../../../lib/schedule/spec.ts';

const at = (iso: string): bigint => parseIsoTimestamp(iso) as bigint;

describe('schedule occurrences: a job per (schedule, nominal time)', () => {
  it('names the job after the schedule and the nominal time, a valid identifier beginning with the schedule\'s', () => {
    expect(occurrenceId('nightly.backup', at('2026-11-27T02:30:00Z'))).to.equal('nightly.backup:20261127T023000Z');
    expect(occurrenceId('s', at('2026-11-27T02:30:01.5Z'))).to.equal('s:20261127T023001.5Z');
    const longest = occurrenceId('x'.repeat(MAX_SCHEDULE_ID_BYTES), at('2262-04-11T23:47:16.854775807Z'));
    expect(validateIdentifier('job', longest)).to.equal(null);
    expect(longest.startsWith('x'.repeat(MAX_SCHEDULE_ID_BYTES))).to.equal(true);
  });

  it('gives two nominal times two identifiers, and one nominal time always the same', () => {
    const ids = new Set<string>();
    for (let k = 0n; k < 1000n; k++) ids.add(occurrenceId('s', 1_800_000_000_000_000_000n + k * 500_000_000n));
    expect(ids.size).to.equal(1000);
    // Formatted times are memoized (a few hundred at most): after a thousand others, the first
    // is formatted again the same, and another schedule's share of it is its own.
    expect(occurrenceId('s', 1_800_000_000_000_000_000n)).to.equal('s:20270115T080000Z');
    expect(occurrenceId('t', 1_800_000_000_000_000_000n)).to.equal('t:20270115T080000Z');
    expect(occurrenceId('s', 5n)).to.equal(occurrenceId('s', 5n));
  });

  it('derives jitter from the schedule and the nominal time: within the bound, the same every time, spread', () => {
    const bound = 60_000_000_000n;
    const draws = Array.from({ length: 2000 }, (_, k) => jitterOf('herd', BigInt(k) * 60_000_000_000n, bound));
    for (const d of draws) expect(d >= 0n && d <= bound).to.equal(true);
    expect(jitterOf('herd', 0n, bound)).to.equal(draws[0]);
    expect(jitterOf('other', 0n, bound)).to.not.equal(draws[0]);
    // Spread over the bound: each tenth of it gets some.
    const tenths = new Set(draws.map((d) => Number((d * 10n) / (bound + 1n))));
    expect(tenths.size).to.equal(10);
    expect(jitterOf('herd', 7n, 0n)).to.equal(0n);
    // The derivation itself is fixed (SHA-256 of `<id>\0<nominal>`, modulo the bound + 1): a
    // version that changed it would move occurrences not yet decided when it is upgraded to.
    expect(jitterOf('nightly.backup', 1795746600000000000n, 50_000_000_000n)).to.equal(37322945287n);
  });
});
