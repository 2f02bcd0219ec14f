import type { Handler } from './context.ts';

/**
 * One page per command (lib/domain/page.ts): the primary never builds a whole large listing.
 * A status filter is applied while the store walks its slots, within the same bound per page.
 * When no job at all has a wanted status (the per-status counts are exact), there is nothing
 * to walk: the listing ends at once instead of costing a client one request per slice.
 */
export const jobList: Handler<'job.list'> = (ctx, cmd) => {
  const wanted = cmd.statuses;
  if (wanted === undefined) {
    const page = ctx.jobs.page(cmd.prefix, cmd.scope, cmd.cursor, cmd.limit);
    return { ok: true, kind: 'jobs', jobs: page.items, next: page.next };
  }
  const counts = ctx.jobs.counts();
  // An unknown name (no typed worker sends one) has no count: it matches nothing.
  if (!wanted.some((s) => (counts[s] ?? 0) > 0)) return { ok: true, kind: 'jobs', jobs: [], next: null };
  const keep = new Set<string>(wanted);
  const page = ctx.jobs.page(cmd.prefix, cmd.scope, cmd.cursor, cmd.limit, (status) => keep.has(status));
  return { ok: true, kind: 'jobs', jobs: page.items, next: page.next };
};
