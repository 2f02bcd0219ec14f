// The console's controller: learns what the server offers, wires the parts (session, jobs,
// rules, schedules, job and schedule details) and runs the refresh loop: every REFRESH_MS while
// the tab is visible it asks /stats, in cluster mode /cluster (the header's node and the nodes
// table), and for each part on screen (IntersectionObserver) its data: /activity for the
// chart, the page of jobs, of rules and of schedules shown, the open detail; and /whoami
// while the header does not yet name the kept token (a reload: the token came from storage).
// Invariants: no data call is made without a token when the server needs one (so a fresh page
// does not fill the log with 401s), nor to a route its /openapi.json does not list (/cluster
// on a node running alone: a 404 every refresh; /schedules on a server older than them); one
// refresh at a time (one asked for meanwhile runs right after, with the parts both wanted);
// answers that arrive after the token changed are dropped; a 401 on a refresh drops the
// token; every other API failure is shown in the alert region with the API's message verbatim.
import { api, ApiError, serverFeatures, storedToken } from './api.js';
import { renderChart } from './chart.js';
import { closeDetail, detailState, reloadDetail, setDetailFeatures, setupDetail } from './detail.js';
import { nodeLabel } from './format.js';
import { deleteJob, editJob, jobsList, setupJobs } from './jobs.js';
import { clearRendered, refreshRelative, renderCluster, renderCounts, renderMessages, renderNode, renderStats } from './render.js';
import { rulesList, setupRules } from './rules.js';
import { closeScheduleDetail, reloadScheduleDetail, scheduleDetailOpen, setupScheduleDetail } from './schedule-detail.js';
import { deleteSchedule, editSchedule, schedulesList, setupSchedules } from './schedules.js';
import { canCall, needsPrincipal, setNeedsToken, setPrincipal, setupSession, showSession, tokenRefused } from './session.js';

const REFRESH_MS = 2000;
const $ = (id) => document.getElementById(id);
/** Section element id -> the part of the refresh it shows. */
const SECTIONS = { 'overview-section': 'activity', 'jobs-section': 'jobs', 'rules-section': 'rules', 'schedules-section': 'schedules' };

const state = {
  cluster: false,
  activity: false,
  schedules: false,
  refreshing: false,
  again: null,
  timer: 0,
  // Parts on screen; all of them until the IntersectionObserver first reports.
  visible: new Set(Object.values(SECTIONS)),
  errors: { session: [], refresh: [], action: [] },
};

function describe(err) {
  return err instanceof ApiError ? err.describe() : `Unexpected error: ${err instanceof Error ? err.message : String(err)}`;
}

function showErrors(source, messages) {
  state.errors[source] = messages;
  renderMessages($('errors'), [...state.errors.session, ...state.errors.action, ...state.errors.refresh]);
}

function say(text) {
  $('status').textContent = text;
}

/** A failed call outside the loop (paging, the detail): a 401 drops the token, others show. */
function onError(err) {
  if (err instanceof ApiError && err.status === 401) tokenRefused();
  else showErrors('refresh', [describe(err)]);
}

/** The calls of one refresh: [name, promise, show]; `force` adds parts not on screen. */
function calls(force) {
  const want = (part) => state.visible.has(part) || force.has(part);
  const list = [['stats', api.stats(), (stats) => { renderStats($('stats'), stats); renderCounts($('counts'), stats); }]];
  if (needsPrincipal()) list.push(['whoami', api.whoami(), setPrincipal]);
  if (state.activity && want('activity')) list.push(['activity', api.activity(), (a) => renderChart($('activity-chart'), a)]);
  if (state.cluster) {
    list.push(['cluster', api.cluster(), (view) => { renderNode($('node'), nodeLabel(view)); renderCluster($('cluster'), view); }]);
  }
  if (want('jobs')) list.push(['jobs', jobsList.request(), (answer) => jobsList.show(answer)]);
  if (want('rules')) list.push(['rules', rulesList.request(), (answer) => rulesList.show(answer)]);
  if (state.schedules && want('schedules')) list.push(['schedules', schedulesList.request(), (answer) => schedulesList.show(answer)]);
  return list;
}

/** Puts one round of answers on the page, unless the token changed or was refused meanwhile. */
function apply(token, list, results) {
  // If the token changed meanwhile, these answers belong to someone else.
  if (storedToken() !== token) return;
  if (results.some((r) => r.status === 'rejected' && r.reason instanceof ApiError && r.reason.status === 401)) {
    tokenRefused();
    return;
  }
  results.forEach((r, i) => { if (r.status === 'fulfilled') list[i][2](r.value); });
  refreshRelative($('jobs'), Date.now());
  refreshRelative($('schedules'), Date.now());
  showErrors('refresh', results.filter((r) => r.status === 'rejected').map((r) => describe(r.reason)));
  $('refreshed').textContent = `Last refreshed ${new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
}

/** One round of calls; `force` names parts to fetch even when off screen ('all' for every one). */
async function refresh(force = new Set()) {
  if (!canCall()) return;
  if (state.refreshing) {
    // One in flight may have started before a change: run once more when it ends.
    state.again = new Set([...(state.again ?? []), ...force]);
    return;
  }
  state.refreshing = true;
  try {
    const token = storedToken();
    const list = calls(force.has('all') ? new Set(Object.values(SECTIONS)) : force);
    const detail = detailState().open ? reloadDetail() : null;
    const scheduleDetail = scheduleDetailOpen() ? reloadScheduleDetail() : null;
    const results = await Promise.allSettled(list.map(([, promise]) => promise));
    await detail;
    await scheduleDetail;
    apply(token, list, results);
  } finally {
    state.refreshing = false;
  }
  if (state.again !== null) {
    const next = state.again;
    state.again = null;
    await refresh(next);
  }
}

function schedule() {
  clearInterval(state.timer);
  if ($('auto-refresh').checked) state.timer = setInterval(() => { if (!document.hidden) void refresh(); }, REFRESH_MS);
}

/**
 * Runs a change against the API: success clears the action errors, says so (`done`: the text,
 * or a function of the API's answer that makes it) and refreshes `part`. Resolves with
 * {ok, message}: the message shown when it failed (null when the token was refused instead),
 * for a dialog to show too.
 */
async function change(run, done, part) {
  if (!canCall()) {
    const message = 'Enter a token first: this server needs one.';
    showErrors('action', [message]);
    $('token').focus();
    return { ok: false, message };
  }
  let answer;
  try {
    answer = await run();
  } catch (err) {
    say('');
    if (err instanceof ApiError && err.status === 401) {
      tokenRefused();
      return { ok: false, message: null };
    }
    const message = describe(err);
    showErrors('action', [message]);
    return { ok: false, message };
  }
  showErrors('action', []);
  say(typeof done === 'function' ? done(answer) : done);
  await refresh(new Set([part]));
  return { ok: true, message: null };
}

// "." and ".." are valid identifiers, but a URL path normalizes them away before any request.
function badPathId(kind, id) {
  if (id !== '.' && id !== '..') return false;
  showErrors('action', [`A ${kind} named "${id}" cannot be addressed in an HTTP URL; use the TCP interface.`]);
  return true;
}

/** Clears everything a token was allowed to see. */
function clearData() {
  for (const id of ['stats', 'counts']) clearRendered($(id));
  renderNode($('node'), null);
  renderCluster($('cluster'), null);
  renderChart($('activity-chart'), null);
  jobsList.reset();
  rulesList.reset();
  schedulesList.reset();
  closeDetail();
  closeScheduleDetail();
  showErrors('refresh', []);
  $('refreshed').textContent = '';
}

/** Tracks which sections are on screen; one coming into view is refreshed at once. */
function watchSections() {
  if (typeof IntersectionObserver !== 'function') return;
  const observer = new IntersectionObserver((entries) => {
    const appeared = new Set();
    for (const entry of entries) {
      const part = SECTIONS[entry.target.id];
      if (entry.isIntersecting && !state.visible.has(part)) appeared.add(part);
      if (entry.isIntersecting) state.visible.add(part);
      else state.visible.delete(part);
    }
    if (appeared.size > 0 && !document.hidden) void refresh(appeared);
  });
  for (const id of Object.keys(SECTIONS)) observer.observe($(id));
}

async function start() {
  const shared = { change, badPathId, canCall, onError, showErrors };
  setupSession({
    say, showErrors, describe,
    onSignedIn: () => { clearData(); void refresh(new Set(['all'])); },
    onSignedOut: clearData,
  });
  setupJobs(shared);
  setupRules(shared);
  setupSchedules(shared);
  setupDetail({ onError, change, onEdit: editJob, onDelete: deleteJob });
  setupScheduleDetail({ change, onError, onEdit: editSchedule, onDelete: deleteSchedule });
  $('refresh-now').addEventListener('click', () => void refresh(new Set(['all'])));
  $('auto-refresh').addEventListener('change', schedule);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) void refresh(); });
  try {
    const features = await serverFeatures();
    setNeedsToken(features.needsToken);
    state.cluster = features.cluster;
    state.activity = features.activity;
    state.schedules = features.schedules;
    setDetailFeatures(features);
  } catch (err) {
    showSession();
    showErrors('session', [describe(err)]);
  }
  $('overview-section').classList.toggle('no-activity', !state.activity);
  // A server without schedules (an older version behind the same page) shows no such section.
  $('schedules-section').hidden = !state.schedules;
  if (!canCall()) $('token').focus();
  watchSections();
  schedule();
  await refresh();
}

void start();
