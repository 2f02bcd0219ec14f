// DOM rendering of the console's data: STAT figures, counts per status, the job and rule
// tables. Invariants: API data only ever reaches the page through textContent or attribute
// values (never markup), so an identifier or a command cannot inject anything; a table is
// rebuilt only when its data changed, so the 5-second refresh does not steal focus, and when
// it is rebuilt the focused row button gets its focus back.
import { countByStatus, formatDuration, nsToIso, runnerDetails } from './format.js';

export const JOB_STATUSES = ['planned', 'triggered', 'executed', 'failed'];
/** Runner kinds the HTTP API accepts; amqp and redis rules can only be set over TCP. */
export const EDITABLE_RUNNERS = ['shell', 'direct', 'http', 'awf'];

const rendered = new WeakMap();

/** Creates an element with text content and attributes (`data-*` included). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === undefined || value === null) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

/** Replaces the children of `container` unless `data` is what it already shows. */
function update(container, data, build) {
  const key = JSON.stringify(data);
  if (rendered.get(container) === key) return false;
  rendered.set(container, key);
  const focused = document.activeElement;
  const refocus = focused instanceof HTMLElement && container.contains(focused)
    ? { action: focused.dataset.action, id: focused.dataset.id } : null;
  container.replaceChildren(...build());
  if (refocus !== null && refocus.action !== undefined) {
    const again = [...container.querySelectorAll('[data-action]')]
      .find((b) => b.dataset.action === refocus.action && b.dataset.id === refocus.id);
    (again ?? container.closest('section'))?.focus?.();
  }
  return true;
}

/** Empties `container`; the next render fills it whatever the data. */
export function clearRendered(container) {
  rendered.delete(container);
  container.replaceChildren();
}

export function renderStats(container, stats) {
  update(container, stats, () => Object.entries(stats ?? {}).flatMap(([key, value]) => {
    const shown = key === 'uptime_ns'
      ? [formatDuration(value), el('small', { class: 'ns' }, `${value} ns`)] : [String(value)];
    return [el('div', { class: 'stat' }, el('dt', {}, key), el('dd', { 'data-stat': key }, ...shown))];
  }));
}

/** The cluster node line of the header; hidden (not just empty) for a node running alone. */
export function renderNode(container, label) {
  container.hidden = label === null;
  update(container, label, () => (label === null ? [] : [label]));
}

export function renderCounts(row, jobs) {
  const { counts, total } = countByStatus(jobs, JOB_STATUSES);
  update(row, counts, () => [
    ...JOB_STATUSES.map((s) => el('td', { 'data-count': s }, String(counts[s]))),
    el('td', { 'data-count': 'total' }, String(total)),
  ]);
}

function badge(status) {
  return el('span', { class: `badge badge-${JOB_STATUSES.includes(status) ? status : 'unknown'}` }, status);
}

function emptyRow(columns, text) {
  return el('tr', {}, el('td', { colspan: columns, class: 'empty' }, text));
}

function rowButton(action, id, label, text) {
  return el('button', { type: 'button', class: action.startsWith('delete') ? 'danger' : 'secondary', 'data-action': action, 'data-id': id, 'aria-label': label }, text);
}

export function renderJobs(tbody, jobs) {
  const sorted = [...jobs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  update(tbody, sorted, () => {
    if (sorted.length === 0) return [emptyRow(5, 'No jobs.')];
    return sorted.map((job) => {
      const iso = nsToIso(job.execution);
      return el('tr', { 'data-job': job.id },
        el('th', { scope: 'row' }, el('code', {}, job.id)),
        el('td', {}, badge(job.status)),
        el('td', {}, iso === null ? '—' : el('time', { datetime: iso }, iso)),
        el('td', {}, el('code', { class: 'ns' }, String(job.execution))),
        el('td', { class: 'actions' },
          rowButton('edit-job', job.id, `Edit job ${job.id}`, 'Edit'),
          rowButton('delete-job', job.id, `Delete job ${job.id}`, 'Delete')));
    });
  });
}

function details(runner) {
  const list = el('dl', { class: 'runner' });
  for (const [label, value] of runnerDetails(runner)) {
    list.append(el('dt', {}, label), el('dd', {}, value === '' ? '(none)' : el('code', {}, String(value ?? ''))));
  }
  return list;
}

export function renderRules(tbody, rules) {
  const sorted = [...rules].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  update(tbody, sorted, () => {
    if (sorted.length === 0) return [emptyRow(5, 'No rules.')];
    return sorted.map((rule) => {
      const type = rule.runner?.type ?? '?';
      const actions = el('td', { class: 'actions' });
      if (EDITABLE_RUNNERS.includes(type)) actions.append(rowButton('edit-rule', rule.id, `Edit rule ${rule.id}`, 'Edit'));
      actions.append(rowButton('delete-rule', rule.id, `Delete rule ${rule.id}`, 'Delete'));
      return el('tr', { 'data-rule': rule.id },
        el('th', { scope: 'row' }, el('code', {}, rule.id)),
        el('td', {}, rule.pattern === '' ? el('em', {}, '(every job)') : el('code', {}, rule.pattern)),
        el('td', {}, el('span', { class: 'kind' }, type)),
        el('td', {}, details(rule.runner)),
        actions);
    });
  });
}

/**
 * Shows `messages` in a live region, touching the DOM only when they changed (no
 * re-announcing). The region itself stays in the page: a live region that appears together
 * with its text is often not announced.
 */
export function renderMessages(region, messages) {
  update(region, messages, () => messages.map((m) => el('p', {}, m)));
}
