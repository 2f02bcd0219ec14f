// The FIFO queue of executions waiting for a slot (the runner pool in a runner child, the
// runner processes in the primary) and of a client connection's requests awaiting their
// answers (lib/client/core.ts): O(1) push and shift on a plain array with a head index,
// the array compacted once the taken part is at least half of it and COMPACT_AFTER entries
// long, and dropped whole when it empties, so a burst of a million leaves nothing behind.

/** Taken slots are compacted away once at least this many sit before the head. */
const COMPACT_AFTER = 1024;

export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** The oldest item, left in place; undefined when empty. */
  peek(): T | undefined {
    return this.#items[this.#head];
  }

  /** Every item, oldest first, removed. */
  drain(): T[] {
    const items = this.#items.slice(this.#head) as T[];
    this.clear();
    return items;
  }

  /** The oldest item, removed; undefined when empty. */
  shift(): T | undefined {
    if (this.#head === this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head += 1;
    if (this.#head === this.#items.length) this.clear();
    else if (this.#head >= COMPACT_AFTER && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
