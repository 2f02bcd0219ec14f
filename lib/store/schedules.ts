// The primary's in-memory schedules (tickd-protocol(7) SCHEDULES): each schedule's state by
// identifier, in slots that listings walk (lib/domain/page.ts), and a due-time heap over the
// same slots saying when each schedule must next be decided (lib/engine/scheduling.ts arms
// it; the store does not compute times).
//
// Invariants: byId.get(id) === s <=> slots[s]?.schedule.id === id; free slots hold undefined
// and are in `free`; only occupied slots are ever armed in `due`.
import type { ScheduleState } from '../domain/schedule.ts';
import { scanSlots, type Page } from '../domain/page.ts';
import { DueHeap } from './heap.ts';

export class ScheduleStore {
  private readonly byId = new Map<string, number>();
  private readonly slots: Array<ScheduleState | undefined> = [];
  private readonly free: number[] = [];
  private readonly due = new DueHeap(64);
  get size(): number {
    return this.byId.size;
  }

  get(id: string): ScheduleState | undefined {
    const slot = this.byId.get(id);
    return slot === undefined ? undefined : this.slots[slot];
  }

  /** Creates or replaces a schedule's state; returns the previous one. Its due time is left as it was (arm()). */
  put(state: ScheduleState): ScheduleState | undefined {
    const id = state.schedule.id;
    const slot = this.byId.get(id);
    if (slot !== undefined) {
      const previous = this.slots[slot];
      this.slots[slot] = state;
      return previous;
    }
    const fresh = this.free.pop() ?? this.slots.length;
    this.slots[fresh] = state;
    this.byId.set(id, fresh);
    return undefined;
  }

  delete(id: string): ScheduleState | undefined {
    const slot = this.byId.get(id);
    if (slot === undefined) return undefined;
    const previous = this.slots[slot];
    this.byId.delete(id);
    this.slots[slot] = undefined;
    this.due.remove(slot);
    this.free.push(slot);
    return previous;
  }

  /** The schedule is next decided at `atNs`; null: never again (over, or paused). */
  arm(id: string, atNs: bigint | null): void {
    const slot = this.byId.get(id);
    if (slot === undefined) return;
    if (atNs === null) {
      this.due.remove(slot);
      return;
    }
    this.due.setKey(slot, atNs);
    if (!this.due.has(slot)) this.due.insert(slot);
  }

  /** When the schedule is next decided, or null when it is not armed. */
  armedAt(id: string): bigint | null {
    const slot = this.byId.get(id);
    return slot === undefined || !this.due.has(slot) ? null : this.due.keyOf(slot);
  }

  /** The earliest instant a schedule is armed for. */
  nextDue(): bigint | undefined {
    return this.due.peekKey();
  }

  /** Disarms and returns, earliest first, up to `limit` identifiers armed at or before `nowNs`. */
  takeDue(nowNs: bigint, limit: number): string[] {
    return this.due.popDue(nowNs, limit).map((slot) => this.slots[slot]!.schedule.id);
  }

  /** One page of the schedules whose identifier starts with `prefix` and, unless `scope` is '', with `scope`. */
  page(prefix: string, scope: string, cursor: number, limit: number): Page<ScheduleState> {
    return scanSlots(this.slots.length, cursor, limit, (slot) => {
      const s = this.slots[slot];
      if (s === undefined) return undefined;
      const id = s.schedule.id;
      return id.startsWith(prefix) && (scope === '' || id.startsWith(scope)) ? s : undefined;
    });
  }

  /** Forgets every schedule (cluster mode: the copy is built again from the stream). */
  clear(): void {
    this.byId.clear();
    this.slots.length = 0;
    this.free.length = 0;
    this.due.clear();
  }

  *all(): IterableIterator<ScheduleState> {
    for (const s of this.slots) if (s !== undefined) yield s;
  }
}
