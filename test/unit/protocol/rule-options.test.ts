// RULE SET's options (tickd-protocol(7) RETRIES AND LIMITS): the `name=value` tokens between the
// pattern and the runner type, their refusals, LISTRULES writing them, and the round trip of a
// LISTRULES line back into the same rule; lines without options read and write as before.
import { expect } from 'chai';
import { formatReply } from '../../../lib/protocol/format.ts';
import { parseLine, type ParsedLine } from '../../../lib/protocol/parse.ts';
import { tokenize } from '../../../lib/protocol/tokenize.ts';
import type { Command } from '../../../lib/domain/command.ts';
import type { Rule } from '../../../lib/domain/rule.ts';
import { readRuleOptions, type RuleOptions } from '../../../lib/domain/rule-options.ts';

const S = 1_000_000_000n;

function parse(line: string): ParsedLine {
  const tokens = tokenize(line);
  if (tokens === null) throw new Error(`malformed test line: ${line}`);
  return parseLine(tokens);
}

function ruleOf(line: string): Rule {
  const p = parse(line);
  if (p.kind !== 'command' || p.cmd.op !== 'rule.set') throw new Error(`${line}: ${JSON.stringify(p, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
  return (p.cmd as Extract<Command, { op: 'rule.set' }>).rule;
}

function refusal(line: string): string {
  const p = parse(line);
  if (p.kind !== 'error') throw new Error(`${line}: not refused`);
  expect(p.reply.code, line).to.equal('invalid_args');
  return p.reply.message;
}

function options(retry: unknown, concurrency: unknown, rate: unknown): RuleOptions {
  const r = readRuleOptions(retry, concurrency, rate);
  if ('field' in r || r.options === undefined) throw new Error(JSON.stringify(r));
  return r.options;
}

const SHELL = { type: 'shell', command: 'exit 1' } as const;

/** A LISTRULES line, without its request id, sent back as RULE SET arguments. */
function roundTrip(rule: Rule): Rule {
  const text = formatReply('l', { ok: true, kind: 'rules', rules: [rule], next: null });
  const [line, ok] = text.split('\n');
  expect(ok).to.equal('l OK');
  return ruleOf(`p RULE SET ${line!.slice(2)}`);
}

describe('protocol: RULE SET options', () => {
  it('reads the options between the pattern and the runner type, in any order', () => {
    const rule = ruleOf('r RULE SET o.a o. rate.per=1m concurrency=4 retry.attempts=5 retry.delay=1s rate.limit=10 shell "exit 1"');
    expect(rule).to.deep.equal({
      id: 'o.a', pattern: 'o.', runner: SHELL,
      options: { retry: { attempts: 5, backoff: 'exponential', delay: S, factor: 2, maxDelay: 3600n * S, jitter: 0 }, concurrency: 4, rate: { limit: 10, per: 60n * S } },
    });
    expect(ruleOf('r RULE SET o.b "" concurrency=1 direct /bin/echo a=b').options).to.deep.equal({ concurrency: 1 });
    expect(ruleOf('r RULE SET o.c o. retry.attempts=3 retry.backoff=fixed retry.delay=2s retry.max_delay=2s retry.jitter=0.5 shell x').options)
      .to.deep.equal({ retry: { attempts: 3, backoff: 'fixed', delay: 2n * S, factor: 2, maxDelay: 2n * S, jitter: 0.5 } });
  });

  it('a rule without options has no options member (lines of today read as before)', () => {
    const rule = ruleOf('r RULE SET ls.sh ls.sh. shell true');
    expect(rule).to.deep.equal({ id: 'ls.sh', pattern: 'ls.sh.', runner: { type: 'shell', command: 'true' } });
    expect(Object.hasOwn(rule, 'options')).to.equal(false);
    // `=` after the runner type belongs to the runner, as always.
    expect(ruleOf('r RULE SET w w awf deploy --input env=prod')).to.deep.equal(
      { id: 'w', pattern: 'w', runner: { type: 'awf', workflow: 'deploy', inputs: ['env=prod'] } });
    expect(ruleOf('r RULE SET h h http GET http://h/?a=b').runner).to.deep.equal({ type: 'http', method: 'GET', url: 'http://h/?a=b' });
  });

  it('refuses a bad option naming it, as SCHEDULE SET names its fields', () => {
    const cases: Array<[string, string | RegExp]> = [
      ['retry.attempts=0 retry.delay=1s', /^retry\.attempts: must be an integer from 1 to 1000/],
      ['retry.attempts=3', 'retry.delay: is required when attempts is more than 1'],
      ['retry.delay=1s', 'retry.attempts: is required with any other retry option'],
      ['retry.attempts=3 retry.delay=soon', /^retry\.delay: not a duration such as 30s/],
      ['retry.attempts=3 retry.delay=1s retry.backoff=linear', 'retry.backoff: must be fixed or exponential'],
      ['retry.attempts=3 retry.delay=1s retry.backoff=fixed retry.factor=2', 'retry.factor: applies to exponential backoff only'],
      ['retry.attempts=3 retry.delay=1s retry.jitter=2', /^retry\.jitter: must be a number from 0 to 1/],
      ['retry.attempts=3 retry.delay=1m retry.max_delay=1s', /^retry\.max_delay: must be from delay/],
      ['retry.attempts=2 retry.attempts=3', 'retry.attempts: given twice'],
      ['retry.tries=3', /^retry\.tries: unknown option \(known: retry\.attempts, retry\.backoff, /],
      ['concurrency=0', 'concurrency: must be an integer from 1 to 100000'],
      ['concurrency=many', 'concurrency: must be an integer from 1 to 100000'],
      ['rate.limit=10', 'rate.per: is required with rate.limit'],
      ['rate.per=1s', 'rate.limit: is required with rate.per'],
      ['rate.limit=10 rate.per=0s', /^rate\.per: must be from 1ms to /],
      ['rate.limit=0 rate.per=1s', 'rate.limit: must be an integer from 1 to 1000000'],
      ['colour=red', /^colour: unknown option/],
      ['=5', /^"": unknown option/],
      ['"a b=1"', /^"a b": unknown option/],
    ];
    for (const [opts, want] of cases) {
      const message = refusal(`v RULE SET v.a v. ${opts} shell x`);
      if (typeof want === 'string') expect(message, opts).to.equal(want);
      else expect(message, opts).to.match(want);
    }
  });

  it('keeps the refusals of today, in their order', () => {
    expect(refusal('v RULE SET v.a v. concurrency=2')).to.equal('missing runner type');
    expect(refusal('v RULE SET v/a v. concurrency=0 shell x')).to.match(/^rule identifier contains invalid character/);
    expect(refusal('v RULE SET v.a v. concurrency=2 teleport x')).to.match(/^unknown runner type "teleport"/);
    expect(refusal('v RULE SET v.a v. concurrency=2 shell')).to.equal('shell runner: missing command');
  });

  it('LISTRULES writes the options between the pattern and the runner type', () => {
    const rule: Rule = {
      id: 'l.a', pattern: 'l.', runner: { type: 'http', method: 'POST', url: 'http://h/x' },
      options: options({ attempts: 5, delay: '1s', jitter: 0.25 }, 4, { limit: 10, per: '1m' }),
    };
    expect(formatReply('l', { ok: true, kind: 'rules', rules: [rule], next: null })).to.equal(
      'l l.a l. retry.attempts=5 retry.backoff=exponential retry.delay=1s retry.factor=2 retry.max_delay=1h retry.jitter=0.25 ' +
      'concurrency=4 rate.limit=10 rate.per=1m http POST http://h/x\nl OK\n');
    const plain: Rule = { id: 'l.b', pattern: 'l.', runner: { type: 'shell', command: 'true' } };
    expect(formatReply('l', { ok: true, kind: 'rules', rules: [plain], next: null })).to.equal('l l.b l. shell true\nl OK\n');
  });

  it('round trip: a LISTRULES line sent back as RULE SET arguments is the same rule', () => {
    const rules: Rule[] = [
      { id: 't.plain', pattern: '', runner: SHELL },
      { id: 't.one', pattern: 't.', runner: SHELL, options: options({ attempts: 1 }, undefined, undefined) },
      { id: 't.fixed', pattern: 't.', runner: SHELL, options: options({ attempts: 4, backoff: 'fixed', delay: '90s' }, undefined, undefined) },
      { id: 't.long', pattern: 't.', runner: SHELL, options: options({ attempts: 3, delay: '2h' }, undefined, undefined) },
      // Precision JSON gives and the text form's six decimals would not hold.
      { id: 't.fine', pattern: 't.', runner: SHELL, options: options({ attempts: 9, delay: '1ms', factor: 1.0000001, jitter: 1e-7, max_delay: '1d2h3m4s5ms6us7ns' }, undefined, undefined) },
      { id: 't.limits', pattern: 't.', runner: { type: 'awf', workflow: 'w', inputs: ['a=b c'] }, options: options(undefined, 100000, { limit: 1, per: '1ms' }) },
      { id: 't.all', pattern: 't.', runner: { type: 'direct', executable: '/bin/echo', args: ['x=1', ''] }, options: options({ attempts: 2, delay: '0s' }, 3, { limit: 5, per: '1d' }) },
    ];
    for (const rule of rules) expect(roundTrip(rule), rule.id).to.deep.equal(rule);
  });
});
