// The value stored under the lease key: who holds it, for the logs of those waiting. The
// lease's correctness never depends on it (compare-and-set works on revisions alone), so
// parsing is lenient: a value some other tool wrote is shown raw instead of failing.
// Invariant: `token` is random per Lease object and never leaves it, so a value carrying our
// own token was written by us. The holder string is for people and is not trusted for that:
// callers build it from node name and pid, which two misconfigured containers can share.
import type { KvEntry } from '@nats-io/kv';

export interface LeaseValue {
  /** The node's name, as operators know it. */
  readonly node: string;
  /** Who holds it, for people: `${node}/${pid}/...`. */
  readonly holder: string;
  /** Random per Lease object: how a Lease recognises its own writes. */
  readonly token: string;
  /** Wall clock (ISO 8601) when this holder's tenure began; refreshes keep it. */
  readonly acquiredAt: string;
}

export function encodeLeaseValue(v: LeaseValue): string {
  return JSON.stringify({ node: v.node, holder: v.holder, acquiredAt: v.acquiredAt, token: v.token });
}

/** The stored value, or null when the entry is not a value we can read as ours. */
export function decodeLeaseValue(entry: KvEntry): LeaseValue | null {
  try {
    const v = entry.json<Partial<LeaseValue>>();
    if (typeof v?.holder !== 'string') return null;
    return {
      node: typeof v.node === 'string' ? v.node : '?',
      holder: v.holder,
      acquiredAt: typeof v.acquiredAt === 'string' ? v.acquiredAt : '?',
      token: typeof v.token === 'string' ? v.token : '',
    };
  } catch {
    return null;
  }
}

/** What a log line shows about the current holder; `holder` doubles as the change detector. */
export function describeHolder(entry: KvEntry): { holder: string; node?: string; since?: string } {
  const v = decodeLeaseValue(entry);
  if (v !== null) return { holder: v.holder, node: v.node, since: v.acquiredAt };
  let raw: string;
  try { raw = entry.string(); } catch { raw = `<${entry.length} bytes>`; }
  return { holder: `unreadable value: ${raw.slice(0, 120)}` };
}
