// The rules part of the console: one page of rules (50 rows, paged and filtered by identifier
// prefix on the server, each runner and each option on one compact line), the rule form and the row buttons.
// Invariants: amqp and redis rules are listed and deletable but not editable (the HTTP API
// accepts only shell, direct, http and awf rules); a rule's options (retry, concurrency, rate)
// have inputs of their own, which Edit fills (or empties), so that a Save after an Edit keeps
// them (a PUT replaces the whole rule: a member left out is an option dropped).
import { api } from './api.js';
import { ruleBody } from './format.js';
import { PagedList } from './list.js';
import { renderRules } from './render.js';
import { OPTION_INPUTS, optionFormValues, optionsBody } from './retry-format.js';

export const RULES_PER_PAGE = 50;
const $ = (id) => document.getElementById(id);

let ctx = { change: async () => false, badPathId: () => false, canCall: () => true, onError: () => {} };

export const rulesList = new PagedList({
  limit: RULES_PER_PAGE,
  noun: 'rules',
  fetchPage: (query) => api.rulesPage(query),
  render: renderRules,
  ids: { tbody: 'rules', previous: 'rules-previous', next: 'rules-next', position: 'rules-position', filterForm: 'rule-filter-form', filterInput: 'rule-prefix' },
  onError: (err) => ctx.onError(err),
});

function showRunnerFields(type) {
  for (const set of document.querySelectorAll('#rule-form fieldset[data-runner]')) {
    const active = set.dataset.runner === type;
    set.hidden = !active;
    set.disabled = !active;
  }
}

/** The factor applies to exponential backoff only (the API refuses it with fixed): off otherwise. */
function showFactor() {
  $('rule-opt-factor').disabled = $('rule-opt-backoff').value === 'fixed';
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
  const options = optionFormValues(rule);
  for (const name of OPTION_INPUTS) $(`rule-opt-${name}`).value = options[name];
  showFactor();
  $('rule-pattern').focus();
}

function onRuleSubmit(event) {
  event.preventDefault();
  const id = $('rule-id').value.trim();
  if (ctx.badPathId('rule', id)) return;
  const form = {
    type: $('rule-type').value, pattern: $('rule-pattern').value.trim(),
    command: $('shell-command').value, executable: $('direct-executable').value.trim(), args: $('direct-args').value,
    method: $('http-method').value, url: $('http-url').value.trim(),
    workflow: $('awf-workflow').value.trim(), inputs: $('awf-inputs').value,
  };
  const options = Object.fromEntries(OPTION_INPUTS.map((name) => [name, $(`rule-opt-${name}`).value]));
  void ctx.change(() => api.putRule(id, { ...ruleBody(form), ...optionsBody(options) }), `Saved rule ${id}.`, 'rules');
}

function onTableClick(event) {
  const button = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
  if (button === null) return;
  const { action, id } = button.dataset;
  if (action === 'edit-rule') {
    const rule = rulesList.find(id);
    if (rule !== undefined) fillRuleForm(rule);
  } else if (action === 'delete-rule') {
    if (ctx.badPathId('rule', id) || !window.confirm(`Delete rule "${id}"?`)) return;
    void ctx.change(() => api.deleteRule(id), `Deleted rule ${id}.`, 'rules');
  }
}

/** Wires the rules section; `options` = { change, badPathId, canCall, onError }. */
export function setupRules(options) {
  ctx = options;
  rulesList.setup(options.canCall);
  $('rule-form').addEventListener('submit', onRuleSubmit);
  $('rule-type').addEventListener('change', () => showRunnerFields($('rule-type').value));
  $('rule-opt-backoff').addEventListener('change', showFactor);
  $('rules').addEventListener('click', onTableClick);
  showRunnerFields($('rule-type').value);
  showFactor();
}
