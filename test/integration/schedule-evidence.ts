// What a schedule test reads back and checks: the skips a schedule's history holds, and that
// every nominal time from its first occurrence job to the last decided one is exactly one
// occurrence job or inside exactly one recorded skip (decided once: never two, never none).
import { expect } from 'chai';
import type { LineClient } from '../helpers/client.ts';
import { parseOccurrenceId } from '../../lib/schedule/occurrence.ts';

export interface Skip { readonly from: bigint; readonly to: bigint; readonly count: number; readonly reason: string }

/** The skips of `id`'s history (SCHEDULE HISTORY, its latest 100 entries). */
export async function skipsOf(c: LineClient, id: string): Promise<Skip[]> {
  const lines = await c.request('h', `SCHEDULE HISTORY ${id} 100`, 10000);
  expect(lines.pop()).to.equal('h OK');
  return lines.filter((l) => l.includes(' skipped ')).map((l) => {
    const m = /^h (\d+) skipped - reason=(\w+) from=(\d+) count=(\d+)$/.exec(l);
    if (m === null) throw new Error(`history line ${l}`);
    return { to: BigInt(m[1]!), reason: m[2]!, from: BigInt(m[3]!), count: Number(m[4]) };
  });
}

/** Checks `jobs` (occurrence job identifiers) and `skips` against each other every `step`; returns the jobs' nominal times. */
export function expectDecidedOnce(jobs: readonly string[], skips: readonly Skip[], step: bigint): Set<bigint> {
  const nominals = jobs.map((j) => parseOccurrenceId(j)!.nominal).sort((a, b) => (a < b ? -1 : 1));
  expect(nominals.length, 'occurrence jobs').to.be.greaterThan(0);
  const first = nominals[0]!;
  const last = nominals[nominals.length - 1]!;
  const lastSkip = skips.reduce((m, s) => (s.to > m ? s.to : m), 0n);
  const end = last > lastSkip ? last : lastSkip;
  const asJob = new Set(nominals);
  expect(asJob.size, 'an occurrence job twice').to.equal(nominals.length);
  for (let t = first; t <= end; t += step) {
    const inSkips = skips.filter((s) => s.from <= t && t <= s.to).length;
    expect((asJob.has(t) ? 1 : 0) + inSkips, `nominal ${t}: decided as a job and/or skips`).to.equal(1);
  }
  return asJob;
}

/** How many times each job ran, from the lines `<job> <TICKD_SCHEDULE> <TICKD_NOMINAL_NS>` a shell rule appended; checks what the runner was told. */
export function runsOf(lines: readonly string[], schedule: string): Map<string, number> {
  const perJob = new Map<string, number>();
  for (const line of lines) {
    const [job, told, nominal] = line.split(' ');
    const occ = parseOccurrenceId(job!);
    expect(occ, job).to.not.equal(null);
    expect([told, nominal], job).to.deep.equal([schedule, occ!.nominal.toString()]);
    perJob.set(job!, (perJob.get(job!) ?? 0) + 1);
  }
  return perJob;
}
