// /rules routes (tickd-protocol(7) HTTP INTERFACE). A rule is
// {"id","pattern","runner":{"type",...}} and, when it has them, "retry", "concurrency", "rate"
// (tickd-protocol(7) RETRIES AND LIMITS) and "on" (the node tags its jobs require); PUT accepts the runner's object or string form
// (lib/http/runner-body.ts) and answers with the rule as stored, in object form. The pattern,
// the runner and the options are validated exactly like TCP RULE SET. Any other member is
// refused (400 naming it): a misspelt "retries" must not leave a rule without its retries.
import type { Rule } from '../../domain/rule.ts';
import { validatePattern } from '../../domain/identifier.ts';
import { optionsToJson, readRuleOptions } from '../../domain/rule-options.ts';
import { runnerToJson } from '../../domain/runner-spec.ts';
import { validateRunner } from '../../domain/runner-validate.ts';
import { isObject, readJsonBody } from '../body.ts';
import { sendError, sendJson, sendNoContent, type JsonValue } from '../json.ts';
import { parseRunnerField } from '../runner-body.ts';
import { pathId } from '../params.ts';
import { listPage } from '../list-page.ts';
import { perform, type Call, type HttpContext, type Route } from '../route.ts';

export function ruleToJson(rule: Rule): JsonValue {
  return { id: rule.id, pattern: rule.pattern, runner: runnerToJson(rule.runner), ...(optionsToJson(rule.options) as Record<string, JsonValue>) };
}

const RULE_MEMBERS: ReadonlySet<string> = new Set(['id', 'pattern', 'runner', 'args', 'retry', 'concurrency', 'rate', 'on']);

/** The rule a PUT body describes, or a message naming the field that is wrong. */
export function ruleFromBody(id: string, body: unknown): Rule | string {
  if (!isObject(body)) return 'request body must be a JSON object';
  for (const name of Object.keys(body)) {
    if (!RULE_MEMBERS.has(name)) return `${name}: unknown field (known: ${[...RULE_MEMBERS].join(', ')})`;
  }
  // A rule read with GET may be sent back as is; its id must then be this one.
  if (body['id'] !== undefined && body['id'] !== id) return 'id in the body must equal the id in the path';
  const pattern = body['pattern'];
  if (pattern === undefined) return 'pattern is required';
  if (typeof pattern !== 'string') return 'pattern must be a string';
  const patternError = validatePattern(pattern);
  if (patternError !== null) return patternError;
  const runner = parseRunnerField(body);
  if (typeof runner === 'string') return runner;
  const runnerError = validateRunner(runner);
  if (runnerError !== null) return `runner: ${runnerError}`;
  const read = readRuleOptions(body['retry'], body['concurrency'], body['rate'], body['on']);
  if ('field' in read) return `${read.field}: ${read.error}`;
  // No options: the rule of today, without an `options` member at all (never {}).
  return read.options === undefined ? { id, pattern, runner } : { id, pattern, runner, options: read.options };
}

async function putRule(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'rule');
  if (id === null) return;
  const body = await readJsonBody(call.req);
  if (!body.ok) return sendError(call.res, body.status, body.message);
  const rule = ruleFromBody(id, body.value);
  if (typeof rule === 'string') return sendError(call.res, 400, rule);
  const done = await perform(ctx, call, { op: 'rule.set', rule }, 'done');
  if (done !== null) sendJson(call.res, 200, ruleToJson(rule));
}

async function getRule(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'rule');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'rule.get', id }, 'rule');
  if (reply !== null) sendJson(call.res, 200, ruleToJson(reply.rule));
}

async function deleteRule(ctx: HttpContext, call: Call): Promise<void> {
  const id = pathId(call, 'rule');
  if (id === null) return;
  const reply = await perform(ctx, call, { op: 'rule.remove', id }, 'done');
  if (reply !== null) sendNoContent(call.res);
}

export function ruleRoutes(ctx: HttpContext): Route[] {
  return [
    { method: 'GET', path: '/rules', auth: true, handle: (call) => listPage(ctx, call, 'rules', ruleToJson) },
    { method: 'PUT', path: '/rules/:id', auth: true, handle: (call) => putRule(ctx, call) },
    { method: 'GET', path: '/rules/:id', auth: true, handle: (call) => getRule(ctx, call) },
    { method: 'DELETE', path: '/rules/:id', auth: true, handle: (call) => deleteRule(ctx, call) },
  ];
}
