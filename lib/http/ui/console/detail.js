// The job detail: a modal <dialog> filled from GET /jobs/{id} when it opens (and again on each
// refresh while it stays open): status, execution, and the last attempt the daemon recorded
// (when it started, how late, how long, the rule and runner, the outcome in the runner's own
// terms with the stderr tail). Invariants: API text reaches the page through textContent only;
// an answer for a job other than the one now shown is dropped; closing gives the focus back
// to the control that opened it.
import { api, ApiError } from './api.js';
import { formatNs, nsToIso, outcomeDetails, relativeExecution } from './format.js';
import { badge, el, executionCell } from './render.js';

const $ = (id) => document.getElementById(id);

const state = { id: null, opener: null, job: null, onError: () => {} };

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
    ...outcomeDetails(outcome).flatMap(([label, value]) => row(label, el('code', { 'data-detail': label }, value))),
  ];
  if (typeof outcome.stderr === 'string') {
    rows.push(...row('stderr (last 512 bytes)', outcome.stderr === ''
      ? el('em', {}, 'nothing was written')
      : el('pre', { class: 'stderr', 'data-detail': 'stderr', tabindex: 0 }, outcome.stderr)));
  }
  return rows;
}

function show(job, nowMs) {
  const body = el('dl', { class: 'detail' },
    ...row('Status', badge(job.status)),
    ...row('Execution', ...executionCell(job.execution, job.status, nowMs)));
  const attempt = job.last_attempt;
  const heading = el('h3', {}, 'Last attempt');
  const part = attempt === undefined || attempt === null
    ? el('p', { class: 'help' }, 'None recorded. The daemon keeps the last attempt of up to 100 000 jobs in memory, from the time a runner\'s result counts; not across restarts, nor after a SET.')
    : el('dl', { class: 'detail', 'data-detail': 'attempt' }, ...attemptRows(attempt, nowMs));
  $('detail-body').replaceChildren(body, heading, part);
}

function showMissing(id, err) {
  $('detail-body').replaceChildren(el('p', { class: 'help' },
    err instanceof ApiError && err.status === 404 ? `Job ${id} does not exist (any more).` : err.describe?.() ?? String(err)));
}

/** Fetches and shows the job now open; nothing when none is. */
export async function reloadDetail() {
  const id = state.id;
  if (id === null) return;
  try {
    const job = await api.job(id);
    if (state.id !== id) return;
    state.job = job;
    show(job, Date.now());
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

/** Wires the dialog; `onError` shows a failed reload in the alert region. */
export function setupDetail({ onError, onEdit, onDelete }) {
  state.onError = onError;
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
  $('detail-edit').addEventListener('click', () => { if (state.job !== null) { const job = state.job; closeDetail(); onEdit(job); } });
  $('detail-delete').addEventListener('click', () => { if (state.id !== null) { const id = state.id; closeDetail(); onDelete(id); } });
  // A click on the backdrop (outside the dialog's box) closes it, like Escape.
  dialog.addEventListener('click', (event) => { if (event.target === dialog) closeDetail(); });
}
