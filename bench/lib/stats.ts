// Percentiles of a sample, the way every row reports them: nearest-rank on the sorted values.
export interface Spread {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}
