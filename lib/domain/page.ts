// Paged listings (QUERY, LISTRULES, GET /jobs, GET /rules): no process ever holds a whole large
// listing. A list command asks for at most `limit` entries from `cursor` on; the reply carries
// the cursor to continue from, or null at the end.
//
// Theory:
// - A cursor is a position in the store's slot order (the order records were given slots;
//   slots of removed records are reused). Walking from 0 to the end visits every record that
//   exists for the whole walk exactly once, in no particular order; a record created or removed
//   during the walk may or may not appear, and one removed and created again may appear twice
//   (like Redis SCAN). Cursors mean nothing across a restart.
// - One page examines at most SCAN_PER_PAGE slots, so a selective prefix over millions of
//   records costs the primary a bounded slice of its loop per request; such a page may hold
//   fewer than `limit` entries (even none) and still have a next cursor.
// - The next page is asked for only once the previous one has been written out to the client,
//   so a client that does not read holds one page at most.

/** The most entries one page may carry (the HTTP `limit` maximum). */
export const MAX_PAGE_ENTRIES = 10_000;
/** Store slots one page examines at most. */
export const SCAN_PER_PAGE = 65_536;
/** Entries per page of a TCP listing: lines stream out page by page. */
export const TCP_PAGE_ENTRIES = 2_048;
/** Cursors are slot numbers: non-negative integers below this bound (a store holds at most 2^24 slots: lib/store/id-table.ts). */
export const MAX_CURSOR = 0x7fffffff;

export interface Page<T> {
  readonly items: T[];
  readonly next: number | null;
}

/** Clamps a requested page size into 1..MAX_PAGE_ENTRIES (the primary trusts no caller). */
export function pageLimit(limit: number): number {
  return Number.isInteger(limit) ? Math.min(MAX_PAGE_ENTRIES, Math.max(1, limit)) : 1;
}

/**
 * Walks slots [cursor, …) of `slots`, at most SCAN_PER_PAGE of them, collecting `pick(slot)`
 * (undefined = skip) until `limit` entries are found.
 */
export function scanSlots<T>(length: number, cursor: number, limit: number, pick: (slot: number) => T | undefined): Page<T> {
  const items: T[] = [];
  const max = pageLimit(limit);
  let slot = Number.isInteger(cursor) && cursor > 0 ? cursor : 0;
  const end = Math.min(length, slot + SCAN_PER_PAGE);
  for (; slot < end && items.length < max; slot++) {
    const item = pick(slot);
    if (item !== undefined) items.push(item);
  }
  return { items, next: slot < length ? slot : null };
}
