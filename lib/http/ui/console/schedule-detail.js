// The schedule detail: a modal <dialog> filled when it opens (and again on each refresh while
// it stays open) from three calls made together: GET /schedules/{id} (its fields, state and
// counts), GET /schedules/{id}/next?n=5 (the next occurrences) and GET
// /schedules/{id}/occurrences (the recent ones, newest first, with their outcome or why they
// were skipped). Its buttons pause or resume, run now, edit (fills the form) and delete.
// Invariants: API text reaches the page through textContent only; an answer for a schedule
// other than the one now shown is dropped; the buttons act on the schedule shown, through
// the controller's `change`; closing gives the focus back to the control that opened it.
import { api, ApiError } from './api.js';
import { badge, el, executionCell, nextRunCell, pausedBadge } from './render.js';
import { countsText, occurrenceNote, specText } from './schedule-format.js';

export const NEXT_SHOWN = 5;
export const RECENT_SHOWN = 10;
const $ = (id) => document.getElementById(id);

const state = { id: null, opener: null, schedule: null, ctx: null };

function row(label, ...value) {
  return [el('dt', {}, label), el('dd', {}, ...value)];
}

const orNone = (v, none) => (v === null || v === undefined ? el('em', {}, none) : el('code', {}, String(v)));

function fields(s, nowMs) {
  return el('dl', { class: 'detail', 'data-detail': 'fields' },
    ...row('Repeats', el('code', { 'data-detail': 'spec' }, specText(s))),
    ...row('Time zone', el('code', {}, String(s.tz))),
    ...row('State', pausedBadge(s.paused)),
    ...row('Next run', ...nextRunCell(s, nowMs)),
    ...row('Occurrences', el('span', { 'data-detail': 'counts' }, countsText(s))),
    ...row('Start', ...(s.start === null || s.start === undefined ? [el('em', {}, 'none')] : executionCell(s.start, 'executed', nowMs))),
    ...row('End (exclusive)', ...(s.end === null || s.end === undefined ? [el('em', {}, 'none')] : executionCell(s.end, 'planned', nowMs))),
    ...row('Limit', orNone(s.limit, 'none')),
    ...row('Jitter', orNone(s.jitter, '0s')),
    ...row('Missed', el('code', {}, String(s.missed)), ' ', el('span', { class: 'help' }, `catch-up ${String(s.catchup)}`)),
    ...row('Overlap', el('code', {}, String(s.overlap))),
    ...row('Keep', orNone(s.keep, 'default'), ' ', el('span', { class: 'help' }, 'executed and failed occurrence jobs kept of each')));
}

/** The calendar's next times (GET /next answers them paused or not: what the schedule would do). */
function nextList(schedule, instants, nowMs) {
  if (instants.length === 0) return [el('p', { class: 'help', 'data-detail': 'next' }, 'None: no occurrence is left before the schedule\'s end.')];
  const list = el('ol', { class: 'instants', 'data-detail': 'next' }, ...instants.map((ns) => el('li', {}, ...executionCell(ns, 'planned', nowMs))));
  const paused = schedule.paused === true || schedule.paused === 'true';
  return paused ? [el('p', { class: 'help' }, 'Paused: these are the calendar\'s; what falls in the pause is missed, and follows the missed policy once resumed.'), list] : [list];
}

function occurrenceRow(o, nowMs) {
  return el('tr', { 'data-occurrence': String(o.nominal), 'data-outcome': String(o.outcome) },
    // A held occurrence still waits: past its time it is "late", as a planned job is.
    el('td', { class: 'when' }, ...executionCell(o.nominal, o.outcome === 'held' ? 'planned' : String(o.outcome), nowMs)),
    el('td', {}, badge(String(o.outcome))),
    el('td', { class: 'details' }, o.job === null || o.job === undefined ? el('em', {}, 'no job') : el('code', {}, String(o.job))),
    el('td', { class: 'details' }, occurrenceNote(o)));
}

function recentTable(occurrences, nowMs) {
  if (occurrences.length === 0) return el('p', { class: 'help', 'data-detail': 'recent' }, 'None yet.');
  return el('div', { class: 'scroll' }, el('table', { class: 'rows', 'data-detail': 'recent' },
    el('caption', { class: 'visually-hidden' }, 'Recent occurrences, newest first'),
    el('thead', {}, el('tr', {}, ...['Nominal time (UTC)', 'Outcome', 'Job', 'Note'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...occurrences.map((o) => occurrenceRow(o, nowMs)))));
}

function show(schedule, next, occurrences, nowMs) {
  $('schedule-detail-body').replaceChildren(
    fields(schedule, nowMs),
    el('h3', {}, `Next ${NEXT_SHOWN} occurrences`), ...nextList(schedule, next, nowMs),
    el('h3', {}, 'Recent occurrences'), recentTable(occurrences, nowMs));
  showButtons();
}

function showButtons() {
  const s = state.schedule;
  const pause = $('schedule-pause');
  const paused = s !== null && (s.paused === true || s.paused === 'true');
  pause.textContent = paused ? 'Resume' : 'Pause';
  for (const id of ['schedule-pause', 'schedule-run', 'schedule-edit']) $(id).disabled = s === null;
}

function showMissing(id, err) {
  $('schedule-detail-body').replaceChildren(el('p', { class: 'help' },
    err instanceof ApiError && err.status === 404 ? `Schedule ${id} does not exist (any more).` : err.describe?.() ?? String(err)));
  showButtons();
}

/** Fetches and shows the schedule now open; nothing when none is. */
export async function reloadScheduleDetail() {
  const id = state.id;
  if (id === null) return;
  try {
    const [schedule, next, recent] = await Promise.all([api.schedule(id), api.scheduleNext(id, NEXT_SHOWN), api.scheduleOccurrences(id, RECENT_SHOWN)]);
    if (state.id !== id) return;
    state.schedule = schedule;
    show(schedule, Array.isArray(next?.next) ? next.next : [], Array.isArray(recent?.occurrences) ? recent.occurrences : [], Date.now());
  } catch (err) {
    if (state.id !== id) return;
    state.schedule = null;
    showMissing(id, err);
    if (!(err instanceof ApiError && err.status === 404)) state.ctx.onError(err);
  }
}

/** Opens the dialog for schedule `id` (from `opener`, which gets the focus back on close). */
export function openScheduleDetail(id, opener = document.activeElement) {
  state.id = id;
  state.schedule = null;
  state.opener = opener instanceof HTMLElement ? opener : null;
  $('schedule-detail-id').textContent = id;
  $('schedule-detail-body').replaceChildren(el('p', { class: 'help' }, 'Loading…'));
  showButtons();
  const dialog = $('schedule-detail');
  if (!dialog.open) dialog.showModal();
  $('schedule-close').focus();
  return reloadScheduleDetail();
}

export function closeScheduleDetail() {
  const dialog = $('schedule-detail');
  if (dialog.open) dialog.close();
}

export function scheduleDetailOpen() {
  return $('schedule-detail').open;
}

function onPause() {
  const s = state.schedule;
  if (s === null) return;
  const resume = s.paused === true || s.paused === 'true';
  void state.ctx.change(() => (resume ? api.resumeSchedule(s.id) : api.pauseSchedule(s.id)),
    `${resume ? 'Resumed' : 'Paused'} schedule ${s.id}.`, 'schedules');
}

function onRun() {
  const id = state.id;
  if (id === null) return;
  void state.ctx.change(() => api.runSchedule(id), (answer) => `Ran schedule ${id} now: job ${answer?.job ?? '?'}.`, 'schedules');
}

/**
 * Wires the dialog; `ctx` = { change, onError, onEdit(schedule), onDelete(id) }: the
 * controller's change (reports and refreshes, the open dialog included) and the form's hooks.
 */
export function setupScheduleDetail(ctx) {
  state.ctx = ctx;
  const dialog = $('schedule-detail');
  dialog.addEventListener('close', () => {
    state.id = null;
    state.schedule = null;
    // As the job detail: give the focus back unless a button of the dialog (Edit) moved it on.
    const lost = document.activeElement === null || document.activeElement === document.body || dialog.contains(document.activeElement);
    if (lost && state.opener?.isConnected) state.opener.focus();
    state.opener = null;
  });
  $('schedule-close').addEventListener('click', closeScheduleDetail);
  $('schedule-pause').addEventListener('click', onPause);
  $('schedule-run').addEventListener('click', onRun);
  $('schedule-edit').addEventListener('click', () => {
    if (state.schedule === null) return;
    const schedule = state.schedule;
    closeScheduleDetail();
    ctx.onEdit(schedule);
  });
  $('schedule-delete').addEventListener('click', () => {
    if (state.id === null) return;
    const id = state.id;
    closeScheduleDetail();
    ctx.onDelete(id);
  });
  dialog.addEventListener('click', (event) => { if (event.target === dialog) closeScheduleDetail(); });
}
