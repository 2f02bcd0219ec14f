// The console's controller: token session, the refresh loop (every REFRESH_MS while the tab
// is visible), and the job and rule forms. Invariants: no data call is made without a token
// when the server needs one (so a fresh page does not fill the log with 401s), nor to a route
// its /openapi.json does not list (/cluster on a node running alone: a 404 every refresh);
// one refresh at a time (one asked for meanwhile runs right after); every API failure is shown
// in the alert region with the API's message verbatim; after each successful change the page
// refreshes.
import { api, ApiError, serverFeatures, storedToken, storeToken } from './api.js';
import { isoFromNow, nodeLabel, nsToIso, ruleBody } from './format.js';
import { clearRendered, renderCounts, renderJobs, renderMessages, renderNode, renderRules, renderStats } from './render.js';

const REFRESH_MS = 5000;
const $ = (id) => document.getElementById(id);

const state = {
  needsToken: true,
  // Whether /openapi.json lists GET /cluster; until it is known, /cluster is not asked.
  cluster: false,
  prefix: '',
  refreshing: false,
  again: false,
  timer: 0,
  jobs: [],
  rules: [],
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

function canCall() {
  return !state.needsToken || storedToken() !== '';
}

function showSession() {
  const token = storedToken();
  $('session-state').textContent = !state.needsToken
    ? 'This server has no token file: every call is allowed without a token.'
    : token === '' ? 'This server needs a token: enter one to see data.' : 'A token is in use for this tab.';
  $('forget-token').disabled = token === '';
}

/** Puts one round of answers on the page; `cluster` is absent when the server has no /cluster. */
function show([stats, jobs, rules, cluster]) {
  const failures = [stats, jobs, rules, cluster].filter((r) => r?.status === 'rejected').map((r) => describe(r.reason));
  if (stats.status === 'fulfilled') renderStats($('stats'), stats.value);
  if (cluster?.status === 'fulfilled') renderNode($('node'), nodeLabel(cluster.value));
  if (jobs.status === 'fulfilled') {
    state.jobs = jobs.value;
    renderJobs($('jobs'), state.jobs);
    renderCounts($('counts'), state.jobs);
  }
  if (rules.status === 'fulfilled') {
    state.rules = rules.value;
    renderRules($('rules'), state.rules);
  }
  showErrors('refresh', failures);
  $('refreshed').textContent = `Last refreshed ${new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
}

async function refresh() {
  if (!canCall()) return;
  if (state.refreshing) {
    // One in flight may have started before a change: run once more when it ends.
    state.again = true;
    return;
  }
  state.refreshing = true;
  try {
    const token = storedToken();
    const calls = [api.stats(), api.jobs(state.prefix), api.rules(), ...(state.cluster ? [api.cluster()] : [])];
    const results = await Promise.allSettled(calls);
    // If the token changed meanwhile, these answers belong to someone else.
    if (storedToken() === token) show(results);
  } finally {
    state.refreshing = false;
  }
  if (state.again) {
    state.again = false;
    await refresh();
  }
}

function schedule() {
  clearInterval(state.timer);
  if ($('auto-refresh').checked) state.timer = setInterval(() => { if (!document.hidden) void refresh(); }, REFRESH_MS);
}

/** Runs a change against the API: success clears the action errors, says so and refreshes. */
async function change(run, done) {
  if (!canCall()) {
    showErrors('action', ['Enter a token first: this server needs one.']);
    $('token').focus();
    return false;
  }
  try {
    await run();
  } catch (err) {
    say('');
    showErrors('action', [describe(err)]);
    return false;
  }
  showErrors('action', []);
  say(done);
  await refresh();
  return true;
}

// "." and ".." are valid identifiers, but a URL path normalizes them away before any request.
function badPathId(kind, id) {
  if (id !== '.' && id !== '..') return false;
  showErrors('action', [`A ${kind} named "${id}" cannot be addressed in an HTTP URL; use the TCP interface.`]);
  return true;
}

function showRunnerFields(type) {
  for (const set of document.querySelectorAll('#rule-form fieldset[data-runner]')) {
    const active = set.dataset.runner === type;
    set.hidden = !active;
    set.disabled = !active;
  }
}

function fillRuleForm(rule) {
  const r = rule.runner;
  $('rule-id').value = rule.id;
  $('rule-pattern').value = rule.pattern;
  $('rule-type').value = r.type;
  showRunnerFields(r.type);
  if (r.type === 'shell') $('shell-command').value = r.command;
  if (r.type === 'direct') { $('direct-executable').value = r.executable; $('direct-args').value = r.args.join('\n'); }
  if (r.type === 'http') { $('http-method').value = r.method; $('http-url').value = r.url; }
  if (r.type === 'awf') { $('awf-workflow').value = r.workflow; $('awf-inputs').value = r.inputs.join('\n'); }
  $('rule-pattern').focus();
}

function onTokenSubmit(event) {
  event.preventDefault();
  storeToken($('token').value.trim());
  $('token').value = '';
  showErrors('session', []);
  showSession();
  say(storedToken() === '' ? 'No token in use.' : 'Token saved for this tab.');
  void refresh();
}

function onForgetToken() {
  storeToken('');
  showSession();
  say('Token forgotten.');
  if (state.needsToken) {
    // Nothing may stay on screen that the next user of this tab is not allowed to see.
    for (const id of ['stats', 'jobs', 'counts', 'rules']) clearRendered($(id));
    renderNode($('node'), null);
    state.jobs = [];
    state.rules = [];
  }
}

function onJobSubmit(event) {
  event.preventDefault();
  const id = $('job-id').value.trim();
  const execution = $('job-execution').value.trim();
  if (badPathId('job', id)) return;
  void change(() => api.putJob(id, execution), `Saved job ${id}.`);
}

function onRuleSubmit(event) {
  event.preventDefault();
  const id = $('rule-id').value.trim();
  if (badPathId('rule', id)) return;
  const form = {
    type: $('rule-type').value, pattern: $('rule-pattern').value.trim(),
    command: $('shell-command').value, executable: $('direct-executable').value.trim(), args: $('direct-args').value,
    method: $('http-method').value, url: $('http-url').value.trim(),
    workflow: $('awf-workflow').value.trim(), inputs: $('awf-inputs').value,
  };
  void change(() => api.putRule(id, ruleBody(form)), `Saved rule ${id}.`);
}

function onTableClick(event) {
  const button = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
  if (button === null) return;
  const { action, id } = button.dataset;
  if (action === 'edit-job') {
    const job = state.jobs.find((j) => j.id === id);
    if (job === undefined) return;
    $('job-id').value = job.id;
    $('job-execution').value = nsToIso(job.execution) ?? '';
    $('job-execution').focus();
  } else if (action === 'edit-rule') {
    const rule = state.rules.find((r) => r.id === id);
    if (rule !== undefined) fillRuleForm(rule);
  } else if (action === 'delete-job') {
    if (badPathId('job', id) || !window.confirm(`Delete job "${id}"?`)) return;
    void change(() => api.deleteJob(id), `Deleted job ${id}.`);
  } else if (action === 'delete-rule') {
    if (badPathId('rule', id) || !window.confirm(`Delete rule "${id}"?`)) return;
    void change(() => api.deleteRule(id), `Deleted rule ${id}.`);
  }
}

async function start() {
  $('token-form').addEventListener('submit', onTokenSubmit);
  $('forget-token').addEventListener('click', onForgetToken);
  $('filter-form').addEventListener('submit', (event) => {
    event.preventDefault();
    state.prefix = $('prefix').value.trim();
    void refresh();
  });
  $('job-form').addEventListener('submit', onJobSubmit);
  $('rule-form').addEventListener('submit', onRuleSubmit);
  $('rule-type').addEventListener('change', () => showRunnerFields($('rule-type').value));
  $('jobs').addEventListener('click', onTableClick);
  $('rules').addEventListener('click', onTableClick);
  $('refresh-now').addEventListener('click', () => void refresh());
  $('auto-refresh').addEventListener('change', schedule);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) void refresh(); });
  $('job-execution').value = isoFromNow(60);
  showRunnerFields($('rule-type').value);
  try {
    const features = await serverFeatures();
    state.needsToken = features.needsToken;
    state.cluster = features.cluster;
  } catch (err) {
    showErrors('session', [describe(err)]);
  }
  showSession();
  if (state.needsToken && storedToken() === '') $('token').focus();
  schedule();
  await refresh();
}

void start();
