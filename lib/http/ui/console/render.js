// DOM rendering of the console's data: STAT figures, counts per status, the cluster's nodes,
// one page of jobs, of rules and of schedules. Invariants: API data only ever reaches the page
// through textContent or attribute values (never markup), so an identifier or a command cannot
// inject anything; only what changed is touched (a job or schedule row is rebuilt when it
// changed, a table is reordered only when its rows did), so the refresh neither steals focus
// nor re-lays the page, and when rows move the focused row button gets its focus back.
import { clusterNodeRows, placementText } from './cluster-format.js';
import { formatDuration, nsToIso, relativeExecution, runnerDetails, statusCounts } from './format.js';
import { optionDetails } from './retry-format.js';
import { countsText, noNextText, specText } from './schedule-format.js';

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

/** The focused row control inside `container`, to find again after its rows moved. */
function focusedControl(container) {
  const focused = document.activeElement;
  return focused instanceof HTMLElement && container.contains(focused) && focused.dataset.action !== undefined
    ? { action: focused.dataset.action, id: focused.dataset.id } : null;
}

function refocus(container, wanted) {
  if (wanted === null || container.contains(document.activeElement)) return;
  const again = [...container.querySelectorAll('[data-action]')]
    .find((b) => b.dataset.action === wanted.action && b.dataset.id === wanted.id);
  (again ?? container.closest('section'))?.focus?.();
}

/** Replaces the children of `container` unless `data` is what it already shows. */
function update(container, data, build) {
  const key = JSON.stringify(data);
  if (rendered.get(container) === key) return false;
  rendered.set(container, key);
  const wanted = focusedControl(container);
  container.replaceChildren(...build());
  refocus(container, wanted);
  return true;
}

/** Empties `container`; the next render fills it whatever the data. */
export function clearRendered(container) {
  rendered.delete(container);
  keyedRows.delete(container);
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

const NODE_COLUMNS = ['Node', 'Role', 'Tags', 'Running', 'Lag', 'Last seen'];

/** One node of the cluster; `data-label` names each cell where the table is stacked (phones). */
function nodeRow(n) {
  const cell = (i, ...content) => el(i === 0 ? 'th' : 'td', { 'data-label': NODE_COLUMNS[i], scope: i === 0 ? 'row' : null }, ...content);
  // A node of a tickd that runs only its own jobs says nothing of tags or executions.
  const none = () => el('span', { class: 'help', title: 'This node runs no jobs of the cluster.' }, '—');
  return el('tr', { 'data-node': n.name },
    cell(0, el('code', {}, n.name), n.self ? el('span', { class: 'help' }, ' (this node)') : ''),
    cell(1, n.role),
    cell(2, n.tags === null ? none() : el('span', { 'data-field': 'tags' }, n.tags)),
    cell(3, n.running === null ? none() : el('span', { 'data-field': 'running' }, n.running)),
    cell(4, n.lag),
    cell(5, n.seen));
}

/**
 * The cluster's nodes from a GET /cluster answer, and on the leader how many executions wait
 * for a node; hidden (not just empty) for null, as for a node running alone.
 */
export function renderCluster(box, view) {
  box.hidden = view === null;
  const rows = view === null ? [] : clusterNodeRows(view);
  update(box.querySelector('[data-cluster="nodes"]'), rows, () => rows.map(nodeRow));
  const placement = box.querySelector('[data-cluster="placement"]');
  const text = view === null ? null : placementText(view);
  placement.hidden = text === null;
  update(placement, text, () => (text === null ? [] : [text]));
}

/** Jobs per status and in all, from the STAT figures (the whole service, not this page). */
export function renderCounts(row, stats) {
  const counts = statusCounts(stats, JOB_STATUSES);
  update(row, counts, () => [...JOB_STATUSES, 'total'].map((s) => el('td', { 'data-count': s }, counts[s])));
}

export function badge(status) {
  return el('span', { class: `badge badge-${JOB_STATUSES.includes(status) ? status : 'unknown'}` }, status);
}

function emptyRow(columns, text) {
  return el('tr', {}, el('td', { colspan: columns, class: 'empty' }, text));
}

function rowButton(action, id, label, text) {
  return el('button', { type: 'button', class: action.startsWith('delete') ? 'danger' : 'secondary', 'data-action': action, 'data-id': id, 'aria-label': label }, text);
}

/** The relative time of an execution ("in 5 min", "3 s late"), refreshed by refreshRelative. */
function relative(ns, status, nowMs) {
  return el('span', { class: 'rel', 'data-ns': ns, 'data-status': status }, relativeExecution(ns, status, nowMs));
}

/** The execution cell: relative time, then the exact value as ISO 8601 and as nanoseconds. */
export function executionCell(ns, status, nowMs) {
  const iso = nsToIso(ns);
  return [relative(ns, status, nowMs), ' ', iso === null ? '—' : el('time', { datetime: iso }, iso), ' ', el('code', { class: 'ns' }, String(ns))];
}

/** Whether the job waits for its next attempt (a retry policy's): it has ran, and runs again at retry_at. */
export function waitingRetry(job) {
  return job.retry_at !== undefined && job.retry_at !== null;
}

function jobRow(job, nowMs) {
  const waiting = waitingRetry(job);
  return el('tr', { 'data-job': job.id },
    el('th', { scope: 'row' }, el('button', { type: 'button', class: 'link', 'data-action': 'open-job', 'data-id': job.id, 'aria-label': `Details of job ${job.id}` }, el('code', {}, job.id))),
    el('td', {}, badge(job.status), ...(waiting ? [' ', el('span', { class: 'retry', 'data-field': 'retry' }, 'retry ', relative(job.retry_at, 'planned', nowMs))] : [])),
    // A waiting job's time has passed without it being late: it ran, and waits on purpose.
    el('td', { class: 'when' }, ...executionCell(job.execution, waiting ? 'executed' : job.status, nowMs)),
    el('td', { class: 'actions' },
      rowButton('edit-job', job.id, `Edit job ${job.id}`, 'Edit'),
      rowButton('delete-job', job.id, `Delete job ${job.id}`, 'Delete')));
}

const keyedRows = new WeakMap(); // tbody -> Map(id -> { key, tr })

/**
 * Shows rows of `items` sorted by identifier, `build` making one. A row whose `keyOf` is
 * unchanged is kept as it is (same node); the tbody is reordered only when the sequence of
 * rows changed. (A page of 100 jobs, or of schedules firing every second, rebuilds only the
 * rows that changed.)
 */
function renderKeyed(tbody, items, keyOf, build, columns, emptyText) {
  const sorted = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const before = keyedRows.get(tbody) ?? new Map();
  const after = new Map();
  const trs = sorted.map((item) => {
    const key = keyOf(item);
    const kept = before.get(item.id);
    const row = kept !== undefined && kept.key === key ? kept : { key, tr: build(item) };
    after.set(item.id, row);
    return row.tr;
  });
  keyedRows.set(tbody, after);
  if (trs.length === 0) {
    update(tbody, ['empty', emptyText], () => [emptyRow(columns, emptyText)]);
    return;
  }
  rendered.delete(tbody);
  const shown = tbody.children;
  if (trs.length === shown.length && trs.every((tr, i) => shown[i] === tr)) return;
  const wanted = focusedControl(tbody);
  tbody.replaceChildren(...trs);
  refocus(tbody, wanted);
}

/** Shows one page of jobs, sorted by identifier; a row is rebuilt when its status or time changed. */
export function renderJobs(tbody, jobs, nowMs, emptyText = 'No jobs.') {
  renderKeyed(tbody, jobs, (job) => `${job.status} ${job.execution} ${job.retry_at ?? ''}`, (job) => jobRow(job, nowMs), 4, emptyText);
}

/** Brings every relative time under `container` up to `nowMs` (text only where it changed). */
export function refreshRelative(container, nowMs) {
  for (const span of container.querySelectorAll('.rel[data-ns]')) {
    const text = relativeExecution(span.dataset.ns, span.dataset.status, nowMs);
    if (span.textContent !== text) span.textContent = text;
  }
}

/** The runner's fields, then the rule's options (retry, concurrency, rate), one line each. */
function details(rule) {
  return el('td', { class: 'details' }, ...runnerDetails(rule.runner).map(([label, value]) =>
    el('span', { class: 'field' }, el('span', { class: 'k' }, label), ' ', value === '' ? '(none)' : el('code', {}, String(value ?? '')))),
  ...optionDetails(rule).map(([field, label, value]) =>
    el('span', { class: 'field option', 'data-field': field }, el('span', { class: 'k' }, label), ' ', el('code', {}, value))));
}

/** Shows one page of rules, sorted by identifier; rebuilt only when the page changed. */
export function renderRules(tbody, rules, emptyText = 'No rules.') {
  const sorted = [...rules].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  update(tbody, [emptyText, sorted], () => {
    if (sorted.length === 0) return [emptyRow(5, emptyText)];
    return sorted.map((rule) => {
      const type = rule.runner?.type ?? '?';
      const actions = el('td', { class: 'actions' });
      if (EDITABLE_RUNNERS.includes(type)) actions.append(rowButton('edit-rule', rule.id, `Edit rule ${rule.id}`, 'Edit'));
      actions.append(rowButton('delete-rule', rule.id, `Delete rule ${rule.id}`, 'Delete'));
      return el('tr', { 'data-rule': rule.id },
        el('th', { scope: 'row' }, el('code', {}, rule.id)),
        el('td', {}, rule.pattern === '' ? el('em', {}, '(every job)') : el('code', {}, rule.pattern)),
        el('td', {}, el('span', { class: 'kind' }, type)),
        details(rule),
        actions);
    });
  });
}

/** A schedule's state: "paused" or "active". */
export function pausedBadge(paused) {
  const on = paused === true || paused === 'true';
  return el('span', { class: `badge badge-${on ? 'paused' : 'active'}`, 'data-paused': String(on) }, on ? 'paused' : 'active');
}

/** A schedule's next run: as a job's execution (relative, ISO, nanoseconds), or why there is none. */
export function nextRunCell(schedule, nowMs) {
  const next = schedule.next;
  return next === null || next === undefined ? [el('em', {}, noNextText(schedule))] : executionCell(next, 'planned', nowMs);
}

function scheduleRow(s, nowMs) {
  return el('tr', { 'data-schedule': s.id },
    el('th', { scope: 'row' }, el('button', { type: 'button', class: 'link', 'data-action': 'open-schedule', 'data-id': s.id, 'aria-label': `Details of schedule ${s.id}` }, el('code', {}, s.id))),
    el('td', { class: 'details' }, el('code', { 'data-field': 'spec' }, specText(s)), ' ', el('span', { class: 'k' }, `in ${s.tz}`)),
    el('td', { class: 'when', 'data-field': 'next' }, ...nextRunCell(s, nowMs)),
    el('td', {}, pausedBadge(s.paused)),
    el('td', { 'data-field': 'counts' }, countsText(s)),
    el('td', { class: 'actions' },
      rowButton('edit-schedule', s.id, `Edit schedule ${s.id}`, 'Edit'),
      rowButton('delete-schedule', s.id, `Delete schedule ${s.id}`, 'Delete')));
}

/** Shows one page of schedules, sorted by identifier; a row is rebuilt when anything of it changed. */
export function renderSchedules(tbody, schedules, nowMs, emptyText = 'No schedules.') {
  renderKeyed(tbody, schedules, (s) => JSON.stringify(s), (s) => scheduleRow(s, nowMs), 6, emptyText);
}

/**
 * Shows `messages` in a live region, touching the DOM only when they changed (no
 * re-announcing). The region itself stays in the page: a live region that appears together
 * with its text is often not announced.
 */
export function renderMessages(region, messages) {
  update(region, messages, () => messages.map((m) => el('p', {}, m)));
}
