// One slice of a burst (firing.ts for due jobs, retrying.ts for retries come due): items are
// taken and handled a chunk at a time until `max` of them, or until `budgetMs` of the monotonic
// clock has passed (looked at between chunks; the first chunk always runs), so that no turn of
// the primary is long however many are due. The caller runs the next slice on a later step.
export function inSlice<T>(max: number, chunk: number, budgetMs: number, take: (n: number) => readonly T[], handle: (items: readonly T[]) => void): void {
  const started = performance.now();
  for (let done = 0; done < max && (done === 0 || performance.now() - started < budgetMs);) {
    const items = take(Math.min(chunk, max - done));
    if (items.length === 0) return;
    done += items.length;
    handle(items);
  }
}
