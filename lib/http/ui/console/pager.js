// Where the console is in a paged listing (GET /jobs, GET /rules: limit + opaque cursor, the
// next one from the Link header). Pure state, no DOM. Invariants: the stack holds the cursor
// of every page from the first (null) to the one shown, so "previous" needs no backward
// cursor from the server; the next cursor is only what the last answer for the page shown
// said; a new filter starts over at the first page.
export class Pager {
  constructor(limit) {
    this.limit = limit;
    this.reset();
  }

  /** Back to the first page (a new prefix, a new token). */
  reset() {
    this.stack = [null];
    this.next = null;
  }

  /** The cursor of the page shown: null for the first page. */
  get cursor() {
    return this.stack[this.stack.length - 1];
  }

  /** 0 for the first page. */
  get index() {
    return this.stack.length - 1;
  }

  get hasPrevious() {
    return this.stack.length > 1;
  }

  get hasNext() {
    return this.next !== null;
  }

  /** Records the answer for the page shown: its next cursor (null on the last page). */
  answered(next) {
    this.next = next;
  }

  /** Moves to the next page; false when there is none. */
  forward() {
    if (this.next === null) return false;
    this.stack.push(this.next);
    this.next = null;
    return true;
  }

  /** Moves to the previous page; false on the first. */
  back() {
    if (this.stack.length === 1) return false;
    this.stack.pop();
    this.next = null;
    return true;
  }

  /** "Page 2 · rows 101–200" for `shown` entries on the page shown ("Page 1 · no rows" when empty). */
  describe(shown) {
    const first = this.index * this.limit + 1;
    const rows = shown === 0 ? 'no rows' : `rows ${first}–${first + shown - 1}`;
    return `Page ${this.index + 1} · ${rows}${this.hasNext ? '' : ' (last page)'}`;
  }
}
