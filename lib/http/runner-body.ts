// The runner in HTTP bodies (tickd-protocol(7) HTTP INTERFACE). Requests carry either the
// object form ({"type": "shell", "command": ...}) or the string form ("runner": "http" plus a
// top-level "args" array); both are equally authoritative and produce the same RunnerSpec.
// Responses always use the object form, for all six kinds (runnerToJson in
// lib/domain/runner-spec.ts, which `tickd dump` shares). amqp and redis can only be set over
// TCP.
// Parsing here checks shapes and types (each message names the offending field); semantic
// checks (URL schemes, key=value inputs, ...) are validateRunner's, shared with TCP.
import { parseAwfArgs } from '../domain/arguments.ts';
import { HTTP_METHODS, type HttpMethod, type RunnerSpec } from '../domain/runner-spec.ts';
import { isHttpMethod } from '../domain/runner-validate.ts';
import { isObject } from './body.ts';

type Fields = Readonly<Record<string, unknown>>;

const HTTP_KINDS = ['shell', 'direct', 'http', 'awf'] as const;
const TCP_ONLY = new Set(['amqp', 'redis']);


function stringField(obj: Fields, key: string, name: string): string | { error: string } {
  const v = obj[key];
  if (v === undefined) return { error: `${name} is required` };
  return typeof v === 'string' ? v : { error: `${name} must be a string` };
}

function stringArray(v: unknown, name: string): string[] | { error: string } {
  if (!Array.isArray(v)) return { error: `${name} must be an array of strings` };
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') return { error: `${name}[${i}] must be a string` };
  }
  return v as string[];
}

function httpMethod(v: string, name: string): HttpMethod | { error: string } {
  return isHttpMethod(v) ? v : { error: `${name} must be one of ${HTTP_METHODS.join(', ')}` };
}

const failed = (v: unknown): v is { error: string } => isObject(v) && typeof v['error'] === 'string';

function kindError(kind: string, name: string): string {
  if (TCP_ONLY.has(kind)) return `${name} "${kind}" can only be set over the TCP interface`;
  return `${name} must be one of ${HTTP_KINDS.join(', ')}`;
}

/** Object form: {"type": kind, ...fields}. Returns an error message naming the field. */
export function parseRunnerObject(obj: Fields): RunnerSpec | string {
  const type = obj['type'];
  if (typeof type !== 'string') return 'runner.type must be a string';
  switch (type) {
    case 'shell': {
      const command = stringField(obj, 'command', 'runner.command');
      return failed(command) ? command.error : { type, command };
    }
    case 'direct': {
      const executable = stringField(obj, 'executable', 'runner.executable');
      if (failed(executable)) return executable.error;
      const args = obj['args'] === undefined ? [] : stringArray(obj['args'], 'runner.args');
      return failed(args) ? args.error : { type, executable, args };
    }
    case 'http': {
      const method = stringField(obj, 'method', 'runner.method');
      if (failed(method)) return method.error;
      const checked = httpMethod(method, 'runner.method');
      if (failed(checked)) return checked.error;
      const url = stringField(obj, 'url', 'runner.url');
      return failed(url) ? url.error : { type, method: checked, url };
    }
    case 'awf': {
      const workflow = stringField(obj, 'workflow', 'runner.workflow');
      if (failed(workflow)) return workflow.error;
      const inputs = obj['inputs'] === undefined ? [] : stringArray(obj['inputs'], 'runner.inputs');
      return failed(inputs) ? inputs.error : { type, workflow, inputs };
    }
    default:
      return kindError(type, 'runner.type');
  }
}

/**
 * String form: "runner": kind with the top-level "args" array (shapes in
 * tickd-protocol(7) HTTP INTERFACE).
 */
export function parseRunnerString(kind: string, rawArgs: unknown): RunnerSpec | string {
  if (!(HTTP_KINDS as readonly string[]).includes(kind)) return kindError(kind, 'runner');
  if (rawArgs === undefined) return `args is required when runner is a string`;
  const args = stringArray(rawArgs, 'args');
  if (failed(args)) return args.error;
  switch (kind) {
    case 'shell':
      return args.length === 1 ? { type: 'shell', command: args[0]! } : 'args must be [command] for a shell runner';
    case 'direct':
      return args.length >= 1 ? { type: 'direct', executable: args[0]!, args: args.slice(1) } : 'args must be [executable, ...arguments] for a direct runner';
    case 'http': {
      if (args.length !== 2) return 'args must be [method, url] for an http runner';
      const method = httpMethod(args[0]!, 'args[0]');
      return failed(method) ? method.error : { type: 'http', method, url: args[1]! };
    }
    default: { // awf: [workflow, "--input", "k=v", ...]
      const r = parseAwfArgs(args);
      if (!('error' in r)) return r;
      switch (r.error) {
        case 'no_workflow': return 'args must be [workflow, "--input", "key=value", ...] for an awf runner';
        case 'not_input': return `args[${r.at}] must be "--input"`;
        case 'no_value': return `args[${r.at}] is missing: "--input" needs a key=value`;
      }
    }
  }
}

/** The runner of a PUT /rules body, in either form. `args` must accompany only the string form. */
export function parseRunnerField(body: Fields): RunnerSpec | string {
  const runner = body['runner'];
  if (runner === undefined) return 'runner is required';
  if (typeof runner === 'string') return parseRunnerString(runner, body['args']);
  if (!isObject(runner)) return 'runner must be an object or a string';
  if (body['args'] !== undefined) return 'args is only allowed when runner is a string; put the arguments inside the runner object';
  return parseRunnerObject(runner);
}
