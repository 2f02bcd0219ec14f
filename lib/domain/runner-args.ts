// RULE SET's argument forms after the pattern (tickd-protocol(7) RUNNERS and tickd-protocol(7) RETRIES AND LIMITS):
// the options, then the runner type and its arguments. Read here, in the domain, because three
// readers share the one grammar: the daemon's parser (lib/protocol/parse.ts), and the client
// library and ctl reading LISTRULES lines back (lib/client/rules.ts), which must load no
// daemon module.
import { parseAwfArgs } from './arguments.ts';
import { readOptionTokens, type RuleOptions } from './rule-options.ts';
import type { RunnerSpec } from './runner-spec.ts';
import { isHttpMethod, isRedisCommand } from './runner-validate.ts';

/** User text inside an error message: short, and with control characters made visible. */
export function quoteForMessage(s: string): string {
  const cut = s.length > 64 ? `${s.slice(0, 64)}...` : s;
  return `"${cut.replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}"`;
}

/**
 * The options that open `tokens`, what follows RULE SET's pattern (tickd-protocol(7) RETRIES AND LIMITS):
 * every token up to the first without `=`, which is the runner type. No runner type holds `=`,
 * so a line without options reads exactly as before options existed. Also how ctl reads the
 * options of a LISTRULES line back.
 */
export function splitRuleOptions(tokens: readonly string[]): { options: RuleOptions | undefined; rest: readonly string[] } | string {
  let n = 0;
  while (n < tokens.length && tokens[n]!.includes('=')) n++;
  const read = readOptionTokens(tokens.slice(0, n));
  if ('field' in read) return `${optionName(read.field)}: ${read.error}`;
  return { options: read.options, rest: tokens.slice(n) };
}

/** An option as an error names it: bare when it is a plain name, else quoted (the client's text). */
function optionName(name: string): string {
  return /^[a-z_]{1,16}(\.[a-z_]{1,16})?$/.test(name) ? name : quoteForMessage(name);
}

/**
 * The runner forms of `RULE SET` (tickd-protocol(7) RUNNERS): the runner type and the
 * tokens after it. Checks the shape only; the caller runs validateRunner on the result. The
 * HTTP string form (`runner` + `args`) takes the same argument lists but words its own
 * messages (lib/http/runner-body.ts); the awf list is read by one function for both.
 */
export function parseRunnerArgs(type: string, a: readonly string[]): RunnerSpec | string {
  switch (type) {
    case 'shell':
      if (a.length === 0) return 'shell runner: missing command';
      if (a.length > 1) return 'shell runner takes exactly one command argument (quote the command)';
      return { type: 'shell', command: a[0]! };
    case 'direct':
      if (a.length === 0) return 'direct runner: missing executable';
      return { type: 'direct', executable: a[0]!, args: a.slice(1) };
    case 'awf':
      return parseAwf(a);
    case 'http': {
      if (a.length < 2) return a.length === 0 ? 'http runner: missing method' : 'http runner: missing url';
      if (a.length > 2) return 'http runner takes exactly <method> <url>';
      const method = a[0]!;
      if (!isHttpMethod(method)) return `http method ${quoteForMessage(method)} is not one of GET, POST, PUT, DELETE`;
      return { type: 'http', method, url: a[1]! };
    }
    case 'amqp':
      if (a.length !== 3) return `amqp runner takes exactly <dsn> <exchange> <routing_key> (got ${a.length} arguments)`;
      return { type: 'amqp', dsn: a[0]!, exchange: a[1]!, routing_key: a[2]! };
    case 'redis': {
      if (a.length !== 3) return `redis runner takes exactly <url> <command> <key> (got ${a.length} arguments)`;
      const command = a[1]!;
      if (!isRedisCommand(command)) {
        return `redis command ${quoteForMessage(command)} is not one of PUBLISH, RPUSH, LPUSH, SET (case-sensitive)`;
      }
      return { type: 'redis', url: a[0]!, command, key: a[2]! };
    }
    default:
      return `unknown runner type ${quoteForMessage(type)} (expected shell, direct, http, awf, amqp, redis)`;
  }
}

function parseAwf(a: readonly string[]): RunnerSpec | string {
  const r = parseAwfArgs(a);
  if (!('error' in r)) return r;
  switch (r.error) {
    case 'no_workflow': return 'awf runner: missing workflow';
    case 'not_input': return `awf runner: expected --input before ${quoteForMessage(a[r.at]!)}`;
    case 'no_value': return 'awf runner: --input needs key=value';
  }
}
