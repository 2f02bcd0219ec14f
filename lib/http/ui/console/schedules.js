// The schedules part of the console: one page of schedules (50 rows, paged and filtered by
// identifier prefix on the server: spec, next run, paused or active, fired and skipped
// counts), the schedule form (PUT /schedules/{id}: cron or every, tz, missed, overlap, jitter,
// limit, keep) and the row buttons. Invariants: every change goes through the controller's
// `change`, which reports (the API's message verbatim) and refreshes; a Save after Edit, for
// the identifier edited, keeps the fields the form does not show (start, end, catchup,
// paused) as the schedule has them at that moment, read again just before the PUT (a PUT
// replaces the whole schedule; an edit should change only what it shows, and a pause made
// since the Edit must not be undone by it).
import { api, ApiError } from './api.js';
import { PagedList } from './list.js';
import { refreshRelative, renderSchedules } from './render.js';
import { openScheduleDetail } from './schedule-detail.js';
import { keptFields, scheduleBody, scheduleFormValues } from './schedule-format.js';

export const SCHEDULES_PER_PAGE = 50;
const $ = (id) => document.getElementById(id);

let ctx = { change: async () => false, badPathId: () => false, canCall: () => true, onError: () => {}, showErrors: () => {} };
/** What Edit filled in: the schedule's identifier and its fields the form does not show. */
let editing = { id: null, kept: null };

export const schedulesList = new PagedList({
  limit: SCHEDULES_PER_PAGE,
  noun: 'schedules',
  fetchPage: (query) => api.schedulesPage(query),
  render: (tbody, items, emptyText) => {
    renderSchedules(tbody, items, Date.now(), emptyText);
    refreshRelative(tbody, Date.now());
  },
  ids: { tbody: 'schedules', previous: 'schedules-previous', next: 'schedules-next', position: 'schedules-position', filterForm: 'schedule-filter-form', filterInput: 'schedule-prefix' },
  onError: (err) => ctx.onError(err),
});

/** Shows the spec input of the kind chosen (every or cron); the other is hidden and disabled. */
function showSpecField(kind) {
  for (const set of document.querySelectorAll('#schedule-form [data-spec]')) {
    const active = set.dataset.spec === kind;
    set.hidden = !active;
    set.disabled = !active;
  }
}

function specInput(kind) {
  return $(kind === 'cron' ? 'schedule-cron' : 'schedule-every');
}

/** Fills the form with a schedule (from the list or the detail) to change and save it again. */
export function editSchedule(schedule) {
  const values = scheduleFormValues(schedule);
  $('schedule-id').value = schedule.id;
  $('schedule-kind').value = values.kind;
  showSpecField(values.kind);
  specInput(values.kind).value = values.spec;
  for (const name of ['tz', 'missed', 'overlap', 'jitter', 'limit', 'keep']) $(`schedule-${name}`).value = values[name];
  editing = { id: schedule.id, kept: keptFields(schedule) };
  showKept();
  specInput(values.kind).focus();
}

/** Says, under the form, which fields a save keeps from the schedule being edited. */
function showKept() {
  const line = $('schedule-kept');
  const names = editing.kept === null ? [] : Object.keys(editing.kept);
  const same = editing.id !== null && $('schedule-id').value.trim() === editing.id;
  line.hidden = !same || names.length === 0;
  line.textContent = line.hidden ? '' : `Saving keeps what this form does not show of ${editing.id}, as it is then (at Edit: ${
    names.map((n) => `${n} ${String(editing.kept[n])}`).join(', ')}).`;
}

/** The fields the form does not show of schedule `id` as it is now; null when it is gone. */
async function keptNow(id) {
  try {
    return keptFields(await api.schedule(id));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export function deleteSchedule(id) {
  if (ctx.badPathId('schedule', id) || !window.confirm(`Delete schedule "${id}"?`)) return;
  void ctx.change(() => api.deleteSchedule(id), `Deleted schedule ${id}.`, 'schedules');
}

function onScheduleSubmit(event) {
  event.preventDefault();
  const id = $('schedule-id').value.trim();
  if (ctx.badPathId('schedule', id)) return;
  const kind = $('schedule-kind').value;
  const form = { kind, spec: specInput(kind).value };
  for (const name of ['tz', 'missed', 'overlap', 'jitter', 'limit', 'keep']) form[name] = $(`schedule-${name}`).value;
  const edited = editing.id === id;
  void ctx.change(async () => api.putSchedule(id, scheduleBody(form, edited ? await keptNow(id) : null)), `Saved schedule ${id}.`, 'schedules');
}

function onTableClick(event) {
  const button = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
  if (button === null) return;
  const { action, id } = button.dataset;
  if (action === 'open-schedule') {
    if (!ctx.badPathId('schedule', id)) void openScheduleDetail(id, button);
  } else if (action === 'edit-schedule') {
    const schedule = schedulesList.find(id);
    if (schedule !== undefined) editSchedule(schedule);
  } else if (action === 'delete-schedule') deleteSchedule(id);
}

/** Wires the schedules section; `options` = { change, badPathId, canCall, onError, showErrors }. */
export function setupSchedules(options) {
  ctx = options;
  schedulesList.setup(options.canCall);
  $('schedule-form').addEventListener('submit', onScheduleSubmit);
  $('schedule-kind').addEventListener('change', () => showSpecField($('schedule-kind').value));
  $('schedule-id').addEventListener('input', showKept);
  $('schedules').addEventListener('click', onTableClick);
  showSpecField($('schedule-kind').value);
}
