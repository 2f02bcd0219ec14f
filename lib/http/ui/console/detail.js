// The job detail: a modal <dialog> filled from GET /jobs/{id} and GET /jobs/{id}/attempts when
// it opens (and again on each refresh while it stays open): status, execution, the attempt
// number and, while the job waits for its next attempt, when that comes (retry_at), and in
// cluster mode, while its attempt waits for a node having its rule's tags, since when; the
// attempts the daemon keeps, oldest first, in a compact table; and the last attempt in full
// (when it started, how late, how long, the rule and runner, in cluster mode the node, the
// outcome in the runner's own terms with the stderr tail). A failed job has "Run again" (POST
// /jobs/{id}/retry). Invariants:
// API text reaches the page through textContent only; an answer for a job other than the one
// now shown is dropped; a failed "Run again" is shown inside the dialog too (the page's alert
// region is behind the modal), with the API's message verbatim; closing gives the focus back
// to the control that opened it.
import { api, ApiError } from './api.js';
import { nodeWaitText } from './cluster-format.js';
import { formatNs, nsToIso, outcomeDetails, relativeExecution } from './format.js';
import { badge, el, executionCell, renderMessages, waitingRetry } from './render.js';
import { attemptCells, attemptText } from './retry-format.js';

const $ = (id) => document.getElementById(id);

const state = {
  id: null, opener: null, job: null, onError: () => {}, change: async () => ({ ok: false, message: null }),
  // What the server offers (its /openapi.json): a server without them shows neither.
  features: { attempts: false, retry: false },
};

function row(label, ...value) {
  return [el('dt', {}, label), el('dd', {}, ...value)];
}

function exact(ns) {
  const iso = nsToIso(ns);
  return [iso === null ? String(ns) : el('time', { datetime: iso }, iso), ' ', el('code', { class: 'ns' }, String(ns))];
}

function attemptRows(a, nowMs) {
  const outcome = a.outcome ?? {};
  const rows = [
    ...row('Result', el('strong', { class: a.success === true ? 'ok' : 'bad', 'data-detail': 'summary' }, String(a.summary ?? '')),
      a.success === true ? ' (success)' : ' (failure)'),
    ...row('Started', el('span', { class: 'rel' }, relativeExecution(a.started_ns, 'executed', nowMs)), ' ', ...exact(a.started_ns)),
    ...row('Lateness', formatNs(a.lateness_ns), ' ', el('small', { class: 'ns' }, `${a.lateness_ns} ns`)),
    ...row('Duration', formatNs(a.duration_ns), ' ', el('small', { class: 'ns' }, `${a.duration_ns} ns`)),
    ...row('Rule', a.rule === null || a.rule === undefined ? el('em', {}, 'none matched') : el('code', {}, String(a.rule))),
    ...row('Runner', a.runner === null || a.runner === undefined ? el('em', {}, 'none') : String(a.runner)),
    // Cluster mode only: a single daemon's attempts carry no node.
    ...(typeof a.node === 'string' ? row('Node', el('code', { 'data-detail': 'node' }, a.node)) : []),
    ...outcomeDetails(outcome).flatMap(([label, value]) => row(label, el('code', { 'data-detail': label }, value))),
  ];
  if (typeof outcome.stderr === 'string') {
    rows.push(...row('stderr (last 512 bytes)', outcome.stderr === ''
      ? el('em', {}, 'nothing was written')
      : el('pre', { class: 'stderr', 'data-detail': 'stderr', tabindex: 0 }, outcome.stderr)));
  }
  return rows;
}

/** Cluster mode: the job's attempt waits for a node having its rule's tags, since when. */
function nodeWaitRow(wait, nowMs) {
  const text = nodeWaitText(wait);
  if (text === null) return [];
  const ago = relativeExecution(wait.since_ns, 'executed', nowMs);
  return row('Placement', el('span', { 'data-detail': 'waiting-for-node' }, `waits for ${text}`), ' since ', ...exact(wait.since_ns),
    ...(ago === '' ? [] : [' ', el('span', { class: 'help' }, `(${ago})`)]));
}

const HISTORY_COLUMNS = ['Attempt', 'Started (UTC)', 'Lateness', 'Held', 'Duration', 'Outcome'];
const CELL_CLASSES = ['', 'started', 'span', 'span', 'span', ''];

/** One attempt of the history; `data-label` names each cell where the table is stacked (phones). */
function historyRow(a) {
  const c = attemptCells(a);
  const iso = nsToIso(a?.started_ns);
  const cell = (i, ...content) => el(i === 0 ? 'th' : 'td', { 'data-label': HISTORY_COLUMNS[i], class: CELL_CLASSES[i] || null, scope: i === 0 ? 'row' : null }, ...content);
  return el('tr', { 'data-attempt': c.attempt, 'data-success': String(c.success) },
    cell(0, c.attempt),
    cell(1, iso === null ? String(a?.started_ns) : el('time', { datetime: iso }, iso)),
    cell(2, c.lateness), cell(3, c.held), cell(4, c.duration),
    cell(5, el('span', { class: c.success ? 'ok' : 'bad' }, c.summary)));
}

function history(attempts) {
  if (attempts.length === 0) return el('p', { class: 'help', 'data-detail': 'attempts' }, 'None recorded since the daemon started.');
  return el('div', { class: 'scroll' }, el('table', { class: 'rows attempts', 'data-detail': 'attempts' },
    el('caption', { class: 'visually-hidden' }, 'Attempts, oldest first'),
    // "#" for the attempt: a narrow column; stacked on a phone, the cells say "Attempt".
    el('thead', {}, el('tr', {}, ...HISTORY_COLUMNS.map((h, i) => el('th', { scope: 'col' }, i === 0 ? el('abbr', { title: h }, '#') : h)))),
    el('tbody', {}, ...attempts.map(historyRow))));
}

function show(job, attempts, nowMs) {
  const waiting = waitingRetry(job);
  const body = el('dl', { class: 'detail' },
    ...row('Status', badge(job.status), waiting ? el('span', { class: 'help' }, ' waiting for its next attempt') : ''),
    ...row('Execution', ...executionCell(job.execution, waiting ? 'executed' : job.status, nowMs)),
    ...row('Attempt', el('span', { 'data-detail': 'attempt-number' }, attemptText(job))),
    ...(waiting ? row('Next attempt', el('span', { 'data-detail': 'retry-at' }, ...executionCell(job.retry_at, 'planned', nowMs))) : []),
    ...nodeWaitRow(job.waiting_for_node, nowMs));
  const parts = [body];
  if (attempts !== null) parts.push(el('h3', {}, 'Attempts, oldest first'), history(attempts));
  const attempt = job.last_attempt;
  parts.push(el('h3', {}, 'Last attempt'), attempt === undefined || attempt === null
    ? el('p', { class: 'help' }, 'None recorded. The daemon keeps the last attempt of up to 100 000 jobs in memory, from the time a runner\'s result counts; not across restarts, nor after a SET.')
    : el('dl', { class: 'detail', 'data-detail': 'attempt' }, ...attemptRows(attempt, nowMs)));
  $('detail-body').replaceChildren(...parts);
  showButtons();
}

/** Run again only for a failed job, on a server that has it. */
function showButtons() {
  const retry = $('detail-retry');
  const hide = !state.features.retry || state.job?.status !== 'failed';
  // A hidden button drops the focus (after Run again worked): keep it in the dialog.
  if (hide && document.activeElement === retry) $('detail-close').focus();
  retry.hidden = hide;
}

function showMissing(id, err) {
  $('detail-body').replaceChildren(el('p', { class: 'help' },
    err instanceof ApiError && err.status === 404 ? `Job ${id} does not exist (any more).` : err.describe?.() ?? String(err)));
  showButtons();
}

/** Fetches and shows the job now open; nothing when none is. */
export async function reloadDetail() {
  const id = state.id;
  if (id === null) return;
  try {
    const [job, history] = await Promise.all([api.job(id), state.features.attempts ? api.jobAttempts(id) : null]);
    if (state.id !== id) return;
    state.job = job;
    show(job, history === null ? null : Array.isArray(history?.attempts) ? history.attempts : [], Date.now());
  } catch (err) {
    if (state.id !== id) return;
    state.job = null;
    showMissing(id, err);
    if (!(err instanceof ApiError && err.status === 404)) state.onError(err);
  }
}

/** Opens the dialog for job `id` (from `opener`, which gets the focus back on close). */
export function openDetail(id, opener = document.activeElement) {
  state.id = id;
  state.job = null;
  state.opener = opener instanceof HTMLElement ? opener : null;
  $('detail-id').textContent = id;
  $('detail-body').replaceChildren(el('p', { class: 'help' }, 'Loading…'));
  renderMessages($('detail-errors'), []);
  showButtons();
  const dialog = $('job-detail');
  if (!dialog.open) dialog.showModal();
  $('detail-close').focus();
  return reloadDetail();
}

export function closeDetail() {
  const dialog = $('job-detail');
  if (dialog.open) dialog.close();
}

/** The job shown (null while loading or when it does not exist) and whether the dialog is open. */
export function detailState() {
  return { id: state.id, job: state.job, open: $('job-detail').open };
}

/** What the server offers: `attempts` (the history) and `retry` (Run again), from serverFeatures(). */
export function setDetailFeatures({ attempts, retry }) {
  state.features = { attempts: attempts === true, retry: retry === true };
  showButtons();
}

async function onRetry() {
  const id = state.id;
  if (id === null) return;
  renderMessages($('detail-errors'), []);
  const done = await state.change(() => api.retryJob(id), `Job ${id} runs again.`, 'jobs');
  if (state.id === id) renderMessages($('detail-errors'), done.ok || done.message === null ? [] : [done.message]);
}

/**
 * Wires the dialog; `onError` shows a failed reload in the alert region, `change` is the
 * controller's (reports, refreshes the open dialog included, answers {ok, message}).
 */
export function setupDetail({ onError, change, onEdit, onDelete }) {
  state.onError = onError;
  state.change = change;
  const dialog = $('job-detail');
  dialog.addEventListener('close', () => {
    state.id = null;
    state.job = null;
    // Chromium gives the focus back itself; elsewhere do it, unless a button of the dialog
    // (Edit) already moved it on.
    const lost = document.activeElement === null || document.activeElement === document.body || dialog.contains(document.activeElement);
    if (lost && state.opener?.isConnected) state.opener.focus();
    state.opener = null;
  });
  $('detail-close').addEventListener('click', closeDetail);
  $('detail-retry').addEventListener('click', () => void onRetry());
  $('detail-edit').addEventListener('click', () => { if (state.job !== null) { const job = state.job; closeDetail(); onEdit(job); } });
  $('detail-delete').addEventListener('click', () => { if (state.id !== null) { const id = state.id; closeDetail(); onDelete(id); } });
  // A click on the backdrop (outside the dialog's box) closes it, like Escape.
  dialog.addEventListener('click', (event) => { if (event.target === dialog) closeDetail(); });
}
