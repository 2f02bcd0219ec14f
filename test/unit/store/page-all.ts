// Walks a store's paged listing to its end, a few entries per page, the way the TCP session
// and the HTTP routes do; checks that every cursor moves forward.
import type { Page } from '../../../lib/domain/page.ts';

interface Paged<T> {
  page(prefix: string, scope: string, cursor: number, limit: number): Page<T>;
}

export function pageAll<T>(store: Paged<T>, prefix: string, scope: string, limit = 2): T[] {
  const out: T[] = [];
  let cursor: number | null = 0;
  while (cursor !== null) {
    const page: Page<T> = store.page(prefix, scope, cursor, limit);
    if (page.items.length > limit) throw new Error(`page of ${page.items.length} > limit ${limit}`);
    if (page.next !== null && page.next <= cursor) throw new Error(`cursor went from ${cursor} to ${page.next}`);
    out.push(...page.items);
    cursor = page.next;
  }
  return out;
}
