// The jobs part of the console: one page of jobs (100 rows, paged with the listing's cursor,
// filtered by identifier prefix and status on the server), the job form, the row buttons and "Open job"
// by identifier (any job, on this page or not). Invariants: nothing here downloads more than
// one page; every change goes through the controller's `change`, which reports and refreshes.
import { api } from './api.js';
import { openDetail } from './detail.js';
import { isoFromNow, nsToIso } from './format.js';
import { PagedList } from './list.js';
import { refreshRelative, renderJobs } from './render.js';

export const JOBS_PER_PAGE = 100;
const $ = (id) => document.getElementById(id);

let ctx = { change: async () => false, badPathId: () => false, canCall: () => true, onError: () => {}, showErrors: () => {} };

export const jobsList = new PagedList({
  limit: JOBS_PER_PAGE,
  noun: 'jobs',
  fetchPage: (query) => api.jobsPage(query),
  render: (tbody, items, emptyText) => {
    renderJobs(tbody, items, Date.now(), emptyText);
    refreshRelative(tbody, Date.now());
  },
  ids: { tbody: 'jobs', previous: 'jobs-previous', next: 'jobs-next', position: 'jobs-position', filterForm: 'filter-form', filterInput: 'prefix', filterStatus: 'status-filter' },
  onError: (err) => ctx.onError(err),
});

/** Fills the job form with a job (its stored time in UTC, all nine fraction digits). */
export function editJob(job) {
  $('job-id').value = job.id;
  $('job-execution').value = nsToIso(job.execution) ?? '';
  $('job-execution').focus();
}

export function deleteJob(id) {
  if (ctx.badPathId('job', id) || !window.confirm(`Delete job "${id}"?`)) return;
  void ctx.change(() => api.deleteJob(id), `Deleted job ${id}.`, 'jobs');
}

function onJobSubmit(event) {
  event.preventDefault();
  const id = $('job-id').value.trim();
  const execution = $('job-execution').value.trim();
  if (ctx.badPathId('job', id)) return;
  void ctx.change(() => api.putJob(id, execution), `Saved job ${id}.`, 'jobs');
}

function onOpenSubmit(event) {
  event.preventDefault();
  const id = $('open-id').value.trim();
  if (id === '' || ctx.badPathId('job', id)) return;
  if (!ctx.canCall()) {
    ctx.showErrors('action', ['Enter a token first: this server needs one.']);
    $('token').focus();
    return;
  }
  void openDetail(id, event.submitter ?? $('open-id'));
}

function onTableClick(event) {
  const button = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
  if (button === null) return;
  const { action, id } = button.dataset;
  if (action === 'open-job') void openDetail(id, button);
  else if (action === 'edit-job') {
    const job = jobsList.find(id);
    if (job !== undefined) editJob(job);
  } else if (action === 'delete-job') deleteJob(id);
}

/** Wires the jobs section; `options` = { change, badPathId, canCall, onError, showErrors }. */
export function setupJobs(options) {
  ctx = options;
  jobsList.setup(options.canCall);
  $('job-form').addEventListener('submit', onJobSubmit);
  $('open-form').addEventListener('submit', onOpenSubmit);
  $('jobs').addEventListener('click', onTableClick);
  $('job-execution').value = isoFromNow(60);
}
