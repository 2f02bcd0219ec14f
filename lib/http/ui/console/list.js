// One paged listing on screen (jobs, rules or schedules): a prefix filter and, for jobs, a status filter,
// both applied by the server, the page shown, Previous/Next over a cursor stack (pager.js) and
// the "Page 2 · rows 101–200" line. Invariants: only the page shown is ever fetched; an answer
// made for another page or filter (the user moved on while it was in flight) is dropped; a new
// filter starts at page 1.
import { Pager } from './pager.js';
import { clearRendered } from './render.js';

const $ = (id) => document.getElementById(id);

export class PagedList {
  /**
   * `fetchPage(query)` resolves with {items, next}; `render(tbody, items, emptyText)` shows
   * them; `noun` names the entries ("jobs"); `ids` names the elements (tbody, previous, next,
   * position, filter form and input, and the status select `filterStatus` if the list has one).
   */
  constructor({ limit, noun, fetchPage, render, ids, onError }) {
    this.pager = new Pager(limit);
    this.noun = noun;
    this.fetchPage = fetchPage;
    this.render = render;
    this.ids = ids;
    this.onError = onError;
    this.prefix = '';
    // '' = any status; else a status name, sent as GET /jobs?status=.
    this.status = '';
    this.generation = 0;
    this.items = [];
  }

  /** Starts fetching the page shown; resolves with what show() takes. */
  async request() {
    const generation = this.generation;
    const page = await this.fetchPage({ limit: this.pager.limit, cursor: this.pager.cursor, prefix: this.prefix, status: this.status });
    return { generation, page };
  }

  /** Puts an answer of request() on the page, unless the user has moved on since. */
  show({ generation, page }) {
    if (generation !== this.generation) return false;
    this.pager.answered(page.next);
    this.items = page.items;
    const what = this.status === '' ? this.noun : `${this.status} ${this.noun}`;
    const empty = this.prefix === '' ? `No ${what}.` : `No ${what} with identifier prefix "${this.prefix}".`;
    this.render($(this.ids.tbody), this.items, this.pager.index === 0 ? empty : `No ${this.noun} on this page any more.`);
    this.showPosition();
    return true;
  }

  showPosition() {
    $(this.ids.position).textContent = this.pager.describe(this.items.length);
    const previous = $(this.ids.previous);
    const next = $(this.ids.next);
    const focused = document.activeElement;
    previous.disabled = !this.pager.hasPrevious;
    next.disabled = !this.pager.hasNext;
    // A button that just became disabled drops the focus: hand it to its sibling.
    if (focused === next && next.disabled && !previous.disabled) previous.focus();
    if (focused === previous && previous.disabled && !next.disabled) next.focus();
  }

  /** Fetches and shows the page shown now (after a move, a filter or a change). */
  async reload() {
    try {
      this.show(await this.request());
    } catch (err) {
      this.onError(err);
    }
  }

  move(step) {
    if (!step()) return;
    this.generation++;
    void this.reload();
  }

  /** Forgets everything shown (a new session): page 1, no prefix, empty table. */
  reset() {
    this.pager.reset();
    this.generation++;
    this.items = [];
    this.prefix = '';
    this.status = '';
    $(this.ids.filterInput).value = '';
    if (this.ids.filterStatus !== undefined) $(this.ids.filterStatus).value = '';
    clearRendered($(this.ids.tbody));
    $(this.ids.position).textContent = '';
    $(this.ids.previous).disabled = true;
    $(this.ids.next).disabled = true;
  }

  /** The entry with this identifier on the page shown, if it is there. */
  find(id) {
    return this.items.find((item) => item.id === id);
  }

  /** Wires the filter form and the Previous/Next buttons; `canCall` gates every fetch. */
  setup(canCall) {
    // The form's values as they stand: a status picked after typing a prefix applies both.
    const apply = () => {
      this.prefix = $(this.ids.filterInput).value.trim();
      if (this.ids.filterStatus !== undefined) this.status = $(this.ids.filterStatus).value;
      this.pager.reset();
      this.generation++;
      if (canCall()) void this.reload();
    };
    $(this.ids.filterForm).addEventListener('submit', (event) => {
      event.preventDefault();
      apply();
    });
    // A choice in a list needs no extra click on Filter.
    if (this.ids.filterStatus !== undefined) $(this.ids.filterStatus).addEventListener('change', apply);
    $(this.ids.previous).addEventListener('click', () => this.move(() => this.pager.back()));
    $(this.ids.next).addEventListener('click', () => this.move(() => this.pager.forward()));
  }
}
