// The primary's in-memory rule store: rules by identifier plus a prefix index for matching
// (tickd-protocol(7) "Identifiers and patterns"). The longest pattern that is a prefix of the
// job id wins; among equal patterns the smallest rule identifier wins; the empty pattern is a
// catch-all.
//
// Index: pattern -> sorted ids of the rules carrying it, plus the distinct pattern lengths in
// descending order. match() tries, longest first, each length L <= id length with one hash
// lookup of id.slice(0, L): at most (number of distinct lengths) lookups, never a scan of the
// rules. Identifiers are at most 1024 bytes, so there are at most 1025 distinct lengths, and in
// practice a handful. A trie would cost one node per pattern character and a pointer chase per
// id character; hash lookups of slices are faster in V8 and need no extra structure.
//
// Invariants: byId.get(id) === s <=> slots[s].id === id; free slots hold undefined and are in
// `free`. Every stored rule's id appears exactly once, in byPattern.get(rule.pattern);
// no id list is empty; lengthCount.get(L) is the number of distinct patterns of length L and
// `lengths` holds exactly the L with a non-zero count.
// Ordering: ids are compared by UTF-16 code units, which is byte order for the ASCII
// identifiers that validation admits (tickd-protocol(7) "Identifiers and patterns").
//
// Runner kinds: the store counts its rules of each runner type, and calls onKindsChanged when a
// type gains its first rule or loses its last, whoever changed the rules (a command, a replay,
// a cluster follower applying the leader's records): the runner processes exist and hold a
// kind's module only while a rule could need them (tickd(8) "Runner processes").
import type { Rule } from '../domain/rule.ts';
import type { RunnerType } from '../domain/runner-spec.ts';
import { narrowest } from './prefix.ts';
import { scanSlots, type Page } from '../domain/page.ts';

export class RuleStore {
  /** id -> slot in `slots` (listings walk slots: lib/domain/page.ts); freed slots are reused. */
  private readonly byId = new Map<string, number>();
  private readonly slots: Array<Rule | undefined> = [];
  private readonly free: number[] = [];
  private readonly byPattern = new Map<string, string[]>();
  private readonly lengthCount = new Map<number, number>();
  /** Distinct pattern lengths, longest first. */
  private readonly lengths: number[] = [];
  private readonly kindCount = new Map<RunnerType, number>();
  /** A runner type gained its first rule or lost its last (kinds() tells which are used). */
  onKindsChanged: () => void = () => {};

  get size(): number {
    return this.byId.size;
  }

  get(id: string): Rule | undefined {
    const slot = this.byId.get(id);
    return slot === undefined ? undefined : this.slots[slot];
  }

  /** Creates or replaces the rule by its identifier; returns the previous rule. */
  put(rule: Rule): Rule | undefined {
    const slot = this.byId.get(rule.id);
    const previous = slot === undefined ? undefined : this.slots[slot];
    if (slot !== undefined) this.slots[slot] = rule;
    else {
      const fresh = this.free.pop() ?? this.slots.length;
      this.slots[fresh] = rule;
      this.byId.set(rule.id, fresh);
    }
    this.countKind(rule.runner.type, 1);
    if (previous !== undefined) this.countKind(previous.runner.type, -1);
    if (previous === undefined) {
      this.index(rule.pattern, rule.id);
    } else if (previous.pattern !== rule.pattern) {
      this.unindex(previous.pattern, rule.id);
      this.index(rule.pattern, rule.id);
    }
    return previous;
  }

  /** Deletes the rule; returns it, or undefined when it did not exist. */
  delete(id: string): Rule | undefined {
    const slot = this.byId.get(id);
    if (slot === undefined) return undefined;
    const previous = this.slots[slot]!;
    this.byId.delete(id);
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.unindex(previous.pattern, id);
    this.countKind(previous.runner.type, -1);
    return previous;
  }

  /** The runner types at least one rule uses. */
  kinds(): Set<RunnerType> {
    return new Set(this.kindCount.keys());
  }

  /** Deletes every rule (a cluster node rebuilding its copy of the log). */
  clear(): void {
    for (const id of [...this.byId.keys()]) this.delete(id);
  }

  /** The rule whose pattern is the longest prefix of `jobId` (ties: smallest rule id). */
  match(jobId: string): Rule | undefined {
    const n = jobId.length;
    const lengths = this.lengths;
    for (let i = 0; i < lengths.length; i++) {
      const len = lengths[i]!;
      if (len > n) continue;
      const ids = this.byPattern.get(len === n ? jobId : jobId.slice(0, len));
      if (ids !== undefined) return this.get(ids[0]!);
    }
    return undefined;
  }

  /** One page of the rules whose identifier starts with `prefix` and `scope`, in slot order (lib/domain/page.ts). */
  page(prefix: string, scope: string, cursor: number, limit: number): Page<Rule> {
    const start = narrowest(prefix, scope);
    if (start === null) return { items: [], next: null };
    const slots = this.slots;
    return scanSlots(slots.length, cursor, limit, (slot) => {
      const rule = slots[slot];
      return rule !== undefined && rule.id.startsWith(start) ? rule : undefined;
    });
  }

  private index(pattern: string, id: string): void {
    const ids = this.byPattern.get(pattern);
    if (ids === undefined) {
      this.byPattern.set(pattern, [id]);
      this.countLength(pattern.length, 1);
      return;
    }
    ids.splice(lowerBound(ids, id), 0, id);
  }

  private unindex(pattern: string, id: string): void {
    const ids = this.byPattern.get(pattern);
    if (ids === undefined) return;
    const at = lowerBound(ids, id);
    if (ids[at] !== id) return;
    if (ids.length > 1) {
      ids.splice(at, 1);
      return;
    }
    this.byPattern.delete(pattern);
    this.countLength(pattern.length, -1);
  }

  private countKind(kind: RunnerType, delta: 1 | -1): void {
    const count = (this.kindCount.get(kind) ?? 0) + delta;
    if (count > 0) this.kindCount.set(kind, count);
    else this.kindCount.delete(kind);
    if (count === (delta === 1 ? 1 : 0)) this.onKindsChanged();
  }

  private countLength(len: number, delta: 1 | -1): void {
    const count = (this.lengthCount.get(len) ?? 0) + delta;
    if (count > 0) {
      this.lengthCount.set(len, count);
      if (delta === 1 && count === 1) insertDescending(this.lengths, len);
      return;
    }
    this.lengthCount.delete(len);
    this.lengths.splice(this.lengths.indexOf(len), 1);
  }
}

/** Index of the first element of sorted `ids` that is >= `id`. */
function lowerBound(ids: readonly string[], id: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertDescending(lengths: number[], len: number): void {
  let i = 0;
  while (i < lengths.length && lengths[i]! > len) i++;
  lengths.splice(i, 0, len);
}
