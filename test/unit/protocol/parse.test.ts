// Line parsing: every instruction, every RULE SET runner form, every error and ignore case.
import { expect } from 'chai';
import { parseLine, type ParsedLine } from '../../../lib/protocol/parse.ts';
import { parseRunnerArgs, quoteForMessage } from '../../../lib/domain/runner-args.ts';
import { tokenize } from '../../../lib/protocol/tokenize.ts';
import type { Command } from '../../../lib/domain/command.ts';
import type { RunnerSpec } from '../../../lib/domain/runner-spec.ts';
import { TCP_PAGE_ENTRIES } from '../../../lib/domain/page.ts';

function parse(line: string): ParsedLine {
  const tokens = tokenize(line);
  if (tokens === null) throw new Error(`malformed test line: ${line}`);
  return parseLine(tokens);
}

const command = (line: string): Command => {
  const p = parse(line);
  expect(p.kind, `${line} -> ${JSON.stringify(p, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`).to.equal('command');
  return (p as { cmd: Command }).cmd;
};

/** The invalid_args message for a line, asserting rid and code on the way. */
const invalid = (line: string): string => {
  const p = parse(line);
  expect(p.kind, line).to.equal('error');
  const e = p as Extract<ParsedLine, { kind: 'error' }>;
  expect(e.rid, line).to.equal(line.split(' ')[0]);
  expect(e.reply.code, line).to.equal('invalid_args');
  expect(e.reply.message, line).to.be.a('string').and.not.equal('');
  return e.reply.message;
};

const ignored = (line: string) => expect(parse(line), line).to.deep.equal({ kind: 'ignore' });

const runnerOf = (args: string): RunnerSpec => {
  const cmd = command(`r RULE SET id.x pat. ${args}`);
  expect(cmd.op).to.equal('rule.set');
  return (cmd as Extract<Command, { op: 'rule.set' }>).rule.runner;
};

describe('protocol/parse', () => {
  describe('AUTH', () => {
    it('takes the secret with no request id', () => {
      expect(parse('AUTH s3cret')).to.deep.equal({ kind: 'auth', secret: 's3cret' });
      expect(parse('AUTH "with space"')).to.deep.equal({ kind: 'auth', secret: 'with space' });
      expect(parse('AUTH s3cret trailing')).to.deep.equal({ kind: 'auth', secret: 's3cret' });
    });

    it('gives secret null when missing or empty', () => {
      expect(parse('AUTH')).to.deep.equal({ kind: 'auth', secret: null });
      expect(parse('AUTH ""')).to.deep.equal({ kind: 'auth', secret: null });
    });

    it('is only AUTH in first position and upper case', () => {
      ignored('r1 AUTH secret');
      ignored('auth secret');
    });
  });

  describe('malformed and unknown lines are ignored', () => {
    it('fewer than two tokens, empty rid, unknown or lower-case instructions, RULE without SET', () => {
      for (const line of ['', 'justonetoken', '"" GET x', 'u1 FROBNICATE x', 'u3 set lower.case 1', 'u2 RULE GET x',
        'u2 RULE', 'u2 RULE set a a shell x', 'u5 get x']) ignored(line);
    });
  });

  describe('SET', () => {
    it('integer nanoseconds, two-token datetime, quoted datetime, ISO with offset', () => {
      expect(command('1 SET p.a 1775822400123456789')).to.deep.equal({ op: 'job.set', id: 'p.a', execution: 1775822400123456789n });
      expect(command('1 SET p.a -5')).to.deep.equal({ op: 'job.set', id: 'p.a', execution: -5n });
      expect(command('2 SET p.dt1 2030-01-02 03:04:05')).to.deep.equal({ op: 'job.set', id: 'p.dt1', execution: 1893553445000000000n });
      expect(command('3 SET p.dt2 "2030-01-02 03:04:05"')).to.deep.equal({ op: 'job.set', id: 'p.dt2', execution: 1893553445000000000n });
      expect(command('4 SET p.dt3 2030-01-02T05:04:05.000000001+02:00'))
        .to.deep.equal({ op: 'job.set', id: 'p.dt3', execution: 1893553445000000001n });
    });

    it('errors name the argument', () => {
      expect(invalid('e SET')).to.equal('missing job identifier');
      expect(invalid('e SET p.x')).to.equal('invalid timestamp: missing timestamp');
      expect(invalid('e SET p.x soon')).to.match(/^invalid timestamp: not a valid timestamp/);
      expect(invalid('e SET p.x 2026-02-31 00:00:00')).to.equal('invalid timestamp: day 31 out of range for 2026-02');
      expect(invalid('e SET p.x 2263-01-01T00:00:00Z')).to.match(/^invalid timestamp: out of range/);
      expect(invalid('e SET p.x 99999999999999999999')).to.match(/^invalid timestamp: out of range/);
      expect(invalid('e SET p.x 2030-01-01T00:00:00')).to.match(/^invalid timestamp: .*zone/);
      expect(invalid('e SET bad/id 1')).to.match(/^job identifier contains invalid character '\/'/);
      expect(invalid('e SET "" 1')).to.equal('job identifier must not be empty');
      expect(invalid('e SET p.x 1 2 3')).to.match(/^invalid timestamp: too many arguments/);
      expect(invalid('e SET p.x 1 2')).to.match(/too many arguments/);
    });
  });

  describe('GET / REMOVE / REMOVERULE', () => {
    it('map to their commands', () => {
      expect(command('g GET p.a')).to.deep.equal({ op: 'job.get', id: 'p.a' });
      expect(command('g REMOVE p.a')).to.deep.equal({ op: 'job.remove', id: 'p.a' });
      expect(command('g REMOVERULE rr.x')).to.deep.equal({ op: 'rule.remove', id: 'rr.x' });
    });

    it('reject a missing, invalid or extra argument', () => {
      expect(invalid('2 GET')).to.equal('missing job identifier');
      expect(invalid('2 REMOVE')).to.equal('missing job identifier');
      expect(invalid('2 REMOVERULE')).to.equal('missing rule identifier');
      expect(invalid('2 GET a*')).to.match(/^job identifier contains invalid character/);
      expect(invalid('2 REMOVERULE a b')).to.equal('unexpected argument "b" after the rule identifier');
      expect(invalid('2 GET a b')).to.equal('unexpected argument "b" after the job identifier');
    });
  });

  describe('ATTEMPTS / RETRY', () => {
    it('ATTEMPTS is GET with the history; RETRY the retry command', () => {
      expect(command('a ATTEMPTS p.a')).to.deep.equal({ op: 'job.get', id: 'p.a', history: true });
      expect(command('r RETRY p.a')).to.deep.equal({ op: 'job.retry', id: 'p.a' });
    });

    it('reject a missing, invalid or extra argument as GET does', () => {
      for (const instruction of ['ATTEMPTS', 'RETRY']) {
        expect(invalid(`2 ${instruction}`)).to.equal('missing job identifier');
        expect(invalid(`2 ${instruction} a*`)).to.match(/^job identifier contains invalid character/);
        expect(invalid(`2 ${instruction} a b`)).to.equal('unexpected argument "b" after the job identifier');
      }
    });

    it('are case-sensitive like every instruction', () => {
      ignored('2 attempts a');
      ignored('2 Retry a');
    });
  });

  describe('QUERY / LISTRULES / STAT', () => {
    it('QUERY with and without a pattern', () => {
      expect(command('q QUERY')).to.deep.equal({ op: 'job.list', prefix: '', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES });
      expect(command('q QUERY q.')).to.deep.equal({ op: 'job.list', prefix: 'q.', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES });
      expect(command('q QUERY ""')).to.deep.equal({ op: 'job.list', prefix: '', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES });
    });

    it('QUERY rejects an invalid pattern and extra arguments', () => {
      expect(invalid('q QUERY q.*')).to.match(/^pattern contains invalid character '\*'/);
      expect(invalid('q QUERY a b')).to.equal('unexpected argument "b" after the pattern');
    });

    it('LISTRULES and STAT ignore trailing arguments', () => {
      expect(command('l LISTRULES')).to.deep.equal({ op: 'rule.list', prefix: '', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES });
      expect(command('l LISTRULES ignored trailing args')).to.deep.equal({ op: 'rule.list', prefix: '', scope: '', cursor: 0, limit: TCP_PAGE_ENTRIES });
      expect(command('s STAT')).to.deep.equal({ op: 'stat' });
      expect(command('s STAT x "y z"')).to.deep.equal({ op: 'stat' });
    });
  });

  describe('RULE SET', () => {
    it('builds the rule with its id and pattern (pattern may be empty)', () => {
      expect(command('r RULE SET ls.sh ls.sh. shell true')).to.deep.equal(
        { op: 'rule.set', rule: { id: 'ls.sh', pattern: 'ls.sh.', runner: { type: 'shell', command: 'true' } } });
      expect(command('r RULE SET all "" shell true')).to.deep.equal(
        { op: 'rule.set', rule: { id: 'all', pattern: '', runner: { type: 'shell', command: 'true' } } });
    });

    it('every runner form', () => {
      expect(runnerOf('shell "echo \\"hi\\" > /dev/null"')).to.deep.equal({ type: 'shell', command: 'echo "hi" > /dev/null' });
      expect(runnerOf('direct /bin/echo a "b c" ""')).to.deep.equal({ type: 'direct', executable: '/bin/echo', args: ['a', 'b c', ''] });
      expect(runnerOf('direct /bin/true')).to.deep.equal({ type: 'direct', executable: '/bin/true', args: [] });
      expect(runnerOf('awf deploy')).to.deep.equal({ type: 'awf', workflow: 'deploy', inputs: [] });
      expect(runnerOf('awf deploy --input env=prod --input v=2')).to.deep.equal(
        { type: 'awf', workflow: 'deploy', inputs: ['env=prod', 'v=2'] });
      expect(runnerOf('http POST http://127.0.0.1:9/hook')).to.deep.equal({ type: 'http', method: 'POST', url: 'http://127.0.0.1:9/hook' });
      expect(runnerOf('amqp amqp://guest:guest@127.0.0.1:5672/ ex rk')).to.deep.equal(
        { type: 'amqp', dsn: 'amqp://guest:guest@127.0.0.1:5672/', exchange: 'ex', routing_key: 'rk' });
      expect(runnerOf('amqp amqp://h "" ""')).to.deep.equal({ type: 'amqp', dsn: 'amqp://h', exchange: '', routing_key: '' });
      expect(runnerOf('redis redis://127.0.0.1:6379/0 RPUSH q')).to.deep.equal(
        { type: 'redis', url: 'redis://127.0.0.1:6379/0', command: 'RPUSH', key: 'q' });
    });

    it('missing rule id, pattern, runner type', () => {
      expect(invalid('v RULE SET')).to.equal('missing rule identifier');
      expect(invalid('v RULE SET v.a')).to.equal('missing pattern');
      expect(invalid('v RULE SET v.a v.a')).to.equal('missing runner type');
      expect(invalid('v RULE SET v/a v.a shell x')).to.match(/^rule identifier contains invalid character/);
      expect(invalid('v RULE SET v.a v* shell x')).to.match(/^pattern contains invalid character/);
      expect(invalid('v RULE SET v.a v.a teleport x')).to.match(/^unknown runner type "teleport"/);
      expect(invalid('v RULE SET v.a v.a SHELL x')).to.match(/^unknown runner type/);
    });

    it('runner form errors', () => {
      const cases: Array<[string, RegExp]> = [
        ['shell', /^shell runner: missing command$/],
        ['shell echo hi', /exactly one command argument \(quote the command\)/],
        ['shell ""', /^shell command must not be empty$/],
        ['direct', /^direct runner: missing executable$/],
        ['direct ""', /^direct executable must not be empty$/],
        ['awf', /^awf runner: missing workflow$/],
        ['awf wf --input novalue', /^awf input 1 must be key=value/],
        ['awf wf --input', /--input needs key=value/],
        ['awf wf env=prod', /expected --input before "env=prod"/],
        ['awf wf --input a=1 --inputs b=2', /expected --input before "--inputs"/],
        ['http', /^http runner: missing method$/],
        ['http GET', /^http runner: missing url$/],
        ['http GET http://x/ extra', /exactly <method> <url>/],
        ['http FETCH http://x/', /^http method "FETCH" is not one of GET, POST, PUT, DELETE$/],
        ['http get http://x/', /^http method "get"/],
        ['http GET ftp://x/', /must start with http:\/\/ or https:\/\//],
        ['amqp amqp://h ex', /exactly <dsn> <exchange> <routing_key> \(got 2 arguments\)/],
        ['amqp amqp://h ex rk more', /got 4 arguments/],
        ['amqp amqps://h/ ex rk', /amqps:\/\/ \(TLS\) is not supported/],
        ['amqp notadsn ex rk', /must start with amqp:\/\//],
        ['redis redis://127.0.0.1:6379 GET k', /^redis command "GET" is not one of PUBLISH, RPUSH, LPUSH, SET/],
        ['redis redis://h set k', /redis command "set"/],
        ['redis rediss://127.0.0.1:6379 SET k', /rediss:\/\/ \(TLS\) is not supported/],
        ['redis redis://127.0.0.1:6379 SET', /exactly <url> <command> <key> \(got 2 arguments\)/],
        ['redis redis://127.0.0.1:6379 SET k extra', /got 4 arguments/],
        ['redis redis://h SET ""', /^redis key must not be empty$/],
      ];
      for (const [args, re] of cases) expect(invalid(`v RULE SET v.a v.a ${args}`), args).to.match(re);
    });
  });

  describe('parseRunnerArgs', () => {
    it('checks the shape only (validation is the caller\'s)', () => {
      expect(parseRunnerArgs('awf', ['wf', '--input', 'a=1'])).to.deep.equal({ type: 'awf', workflow: 'wf', inputs: ['a=1'] });
      expect(parseRunnerArgs('shell', [''])).to.deep.equal({ type: 'shell', command: '' });
      expect(parseRunnerArgs('http', ['GET'])).to.equal('http runner: missing url');
    });
  });

  describe('quoteForMessage', () => {
    it('quotes, shortens and makes control characters visible', () => {
      expect(quoteForMessage('x')).to.equal('"x"');
      expect(quoteForMessage('a\rb\x1b')).to.equal('"a\\x0db\\x1b"');
      expect(quoteForMessage('y'.repeat(100))).to.equal(`"${'y'.repeat(64)}..."`);
    });

    it('keeps error messages free of line breaks', () => {
      expect(invalid('e RULE SET a a tele\rport x')).to.not.match(/[\r\n]/);
    });
  });
});
