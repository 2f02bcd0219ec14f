// Reply formatting: every reply shape, quoting of rule fields, line safety, and the LISTRULES ->
// RULE SET round trip through the real tokenizer and parser.
import { expect } from 'chai';
import {
  formatAuthOk, formatPreAuthError, formatReply, formatRuleArgs, formatTooLong, quoteArg, runnerTokens,
} from '../../../lib/protocol/format.ts';
import { tokenize } from '../../../lib/protocol/tokenize.ts';
import { parseLine } from '../../../lib/protocol/parse.ts';
import type { Attempt } from '../../../lib/domain/attempt.ts';
import type { Job } from '../../../lib/domain/job.ts';
import type { Rule } from '../../../lib/domain/rule.ts';
import { STAT_KEYS, type StatValues } from '../../../lib/domain/stat.ts';
import { denied, internal, invalidArgs, notFound } from '../../../lib/errors.ts';

const RULES: Rule[] = [
  { id: 'ls.sh', pattern: 'ls.sh.', runner: { type: 'shell', command: 'echo "hi" > /dev/null' } },
  { id: 'ls.bs', pattern: 'ls.bs.', runner: { type: 'shell', command: 'printf "a\\\\b\\n"' } },
  { id: 'ls.direct', pattern: 'ls.direct.', runner: { type: 'direct', executable: '/bin/echo', args: ['a', 'b c', '', 'tab\tx', 'q"'] } },
  { id: 'ls.direct0', pattern: 'ls.direct0.', runner: { type: 'direct', executable: '/bin/true', args: [] } },
  { id: 'ls.awf', pattern: 'ls.awf.', runner: { type: 'awf', workflow: 'deploy', inputs: ['env=prod', 'msg=hello world', 'e='] } },
  { id: 'ls.awf0', pattern: 'ls.awf0.', runner: { type: 'awf', workflow: 'w', inputs: [] } },
  { id: 'ls.http', pattern: 'ls.http.', runner: { type: 'http', method: 'POST', url: 'http://127.0.0.1:9/hook?a=b' } },
  { id: 'ls.amqp', pattern: 'ls.amqp.', runner: { type: 'amqp', dsn: 'amqp://guest:guest@127.0.0.1:5672/', exchange: '', routing_key: 'rk' } },
  { id: 'ls.redis', pattern: 'ls.redis.', runner: { type: 'redis', url: 'redis://:p%20w@127.0.0.1:6379/0', command: 'RPUSH', key: 'q k' } },
  { id: 'catch-all', pattern: '', runner: { type: 'shell', command: 'true' } },
  { id: 'utf8', pattern: 'u.', runner: { type: 'shell', command: 'echo é😀' } },
];

describe('protocol/format', () => {
  describe('quoteArg', () => {
    it('leaves safe values bare', () => {
      for (const s of ['abc', 'http://x/?a=b', 'é😀', "it's", 'a=b']) expect(quoteArg(s)).to.equal(s);
    });

    it('quotes empty values and values with space, quote, backslash or control characters', () => {
      expect(quoteArg('')).to.equal('""');
      expect(quoteArg('a b')).to.equal('"a b"');
      expect(quoteArg('say "hi"')).to.equal('"say \\"hi\\""');
      expect(quoteArg('C:\\x')).to.equal('"C:\\\\x"');
      expect(quoteArg('a\tb')).to.equal('"a\tb"');
      expect(quoteArg('end\r')).to.equal('"end\\r"');
      expect(quoteArg('two\nlines')).to.equal('"two\\nlines"');
      expect(quoteArg('\x7f')).to.equal('"\x7f"');
    });
  });

  describe('formatReply', () => {
    it('done, job', () => {
      expect(formatReply('1', { ok: true, kind: 'done' })).to.equal('1 OK\n');
      const job: Job = { id: 'p.a', execution: 1775822400123456789n, status: 'planned' };
      expect(formatReply('2', { ok: true, kind: 'job', job })).to.equal('2 OK planned 1775822400123456789\n');
      // The last attempt a GET /jobs/{id} shows never reaches the TCP line.
      const attempt = { rule: 'r.', runner: 'shell', startedNs: 1n, latenessNs: 1n, durationNs: 1n, outcome: { kind: 'exit', status: 3, stderr: 'x y\n' } } as const;
      expect(formatReply('2', { ok: true, kind: 'job', job, attempt })).to.equal('2 OK planned 1775822400123456789\n');
      expect(formatReply('3', { ok: true, kind: 'metrics', text: '# x\n' })).to.equal('3 ERROR internal\n');
      expect(formatReply('4', { ok: true, kind: 'activity', activity: { intervalMs: 1000, buckets: [] } })).to.equal('4 ERROR internal\n');
      expect(formatReply('2', { ok: true, kind: 'job', job: { ...job, execution: -9223372036854775808n, status: 'failed' } }))
        .to.equal('2 OK failed -9223372036854775808\n');
    });

    it('job with its history (ATTEMPTS): one line per attempt, oldest first, the summary quoted, then OK', () => {
      const job: Job = { id: 'p.a', execution: 100n, status: 'failed', attempt: 3 };
      const attempts: Attempt[] = [
        // Written before attempt numbers and held times existed: attempt 1, held 0.
        { rule: 'r.', runner: 'shell', startedNs: 101n, latenessNs: 1n, durationNs: 5n, outcome: { kind: 'exit', status: 3, stderr: 'boom\n' } },
        { rule: 'r.', runner: 'http', startedNs: 300n, latenessNs: -2n, durationNs: 7n, number: 2, heldNs: 40n, outcome: { kind: 'http_response', status: 204 } },
        { rule: 'r.', runner: 'http', startedNs: 500n, latenessNs: 0n, durationNs: 0n, number: 3, outcome: { kind: 'network_error', error: 'reset "x"\n2 OK' } },
      ];
      const text = formatReply('h', { ok: true, kind: 'job', job, attempts });
      expect(text).to.equal([
        'h 1 101 1 0 5 failure "exit status 3"',
        'h 2 300 -2 40 7 success "HTTP status 204"',
        'h 3 500 0 0 0 failure "network error: reset \\"x\\"\\n2 OK"',
        'h OK',
        '',
      ].join('\n'));
      // One token for the protocol's tokenizer, whatever the error text (a line break stays
      // escaped, as in rule fields: the line holds, the byte does not come back).
      expect(tokenize(text.split('\n')[2]!)).to.have.length(8);
      expect(tokenize(text.split('\n')[1]!)![7]).to.equal('HTTP status 204');
      expect(formatReply('h', { ok: true, kind: 'job', job, attempts: [] })).to.equal('h OK\n');
      expect(formatReply('h', { ok: true, kind: 'job', job, attempts: [{ ...attempts[0]!, outcome: { kind: 'delivered' } }] })).to.equal('h 1 101 1 0 5 success delivered\nh OK\n');
    });

    it('RETRY\'s reply, the job it planned, is written as GET writes a job: the daemon\'s own time', () => {
      const job: Job = { id: 'p.a', execution: 100n, status: 'planned' };
      expect(formatReply('r', { ok: true, kind: 'job', job })).to.equal('r OK planned 100\n');
      expect(formatReply('r', notFound('job', 'p.a'))).to.equal('r ERROR not_found job "p.a" does not exist\n');
    });

    it('jobs: one line per job then OK; empty list is only OK', () => {
      const jobs: Job[] = [
        { id: 'q.one', execution: 100n, status: 'planned' },
        { id: 'q.two', execution: 9223372036854775807n, status: 'executed' },
      ];
      expect(formatReply('4', { ok: true, kind: 'jobs', jobs, next: null })).to.equal(
        '4 q.one planned 100\n4 q.two executed 9223372036854775807\n4 OK\n');
      expect(formatReply('6', { ok: true, kind: 'jobs', jobs: [], next: null })).to.equal('6 OK\n');
    });

    it('jobs: a big list is formatted quickly', () => {
      const jobs: Job[] = [];
      for (let i = 0; i < 100_000; i++) jobs.push({ id: `bulk.job.${i}`, execution: BigInt(i), status: 'triggered' });
      const started = process.hrtime.bigint();
      const text = formatReply('big', { ok: true, kind: 'jobs', jobs, next: null });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const lines = text.split('\n');
      expect(lines).to.have.length(100_002);
      expect(lines[99_999]).to.equal('big bulk.job.99999 triggered 99999');
      expect(lines[100_000]).to.equal('big OK');
      expect(ms).to.be.lessThan(2000);
    });

    it('rules: spec form for each runner kind, then OK', () => {
      const text = formatReply('l', { ok: true, kind: 'rules', rules: RULES, next: null });
      expect(text.split('\n')).to.deep.equal([
        'l ls.sh ls.sh. shell "echo \\"hi\\" > /dev/null"',
        'l ls.bs ls.bs. shell "printf \\"a\\\\\\\\b\\\\n\\""',
        'l ls.direct ls.direct. direct /bin/echo a "b c" "" "tab\tx" "q\\""',
        'l ls.direct0 ls.direct0. direct /bin/true',
        'l ls.awf ls.awf. awf deploy --input env=prod --input "msg=hello world" --input e=',
        'l ls.awf0 ls.awf0. awf w',
        'l ls.http ls.http. http POST http://127.0.0.1:9/hook?a=b',
        'l ls.amqp ls.amqp. amqp amqp://guest:guest@127.0.0.1:5672/ "" rk',
        'l ls.redis ls.redis. redis redis://:p%20w@127.0.0.1:6379/0 RPUSH "q k"',
        'l catch-all "" shell true',
        'l utf8 u. shell "echo é😀"',
        'l OK',
        '',
      ]);
      expect(formatReply('l', { ok: true, kind: 'rules', rules: [], next: null })).to.equal('l OK\n');
    });

    it('rule (single) is written like a one-rule list', () => {
      expect(formatReply('x', { ok: true, kind: 'rule', rule: RULES[0]! }))
        .to.equal('x ls.sh ls.sh. shell "echo \\"hi\\" > /dev/null"\nx OK\n');
    });

    it('stat: the 15 keys in spec order, then OK', () => {
      const stat = Object.fromEntries(STAT_KEYS.map((k, i) => [k, i % 2 === 0 ? BigInt(i) : `v${i}`])) as unknown as StatValues;
      const lines = formatReply('s', { ok: true, kind: 'stat', stat }).split('\n');
      expect(lines).to.have.length(17);
      expect(lines.slice(0, 15).map((l) => l.split(' ')[1])).to.deep.equal([...STAT_KEYS]);
      expect(lines[0]).to.equal('s uptime_ns 0');
      expect(lines[1]).to.equal('s connections v1');
      expect(lines[15]).to.equal('s OK');
      expect(lines[16]).to.equal('');
    });

    it('errors: code and message; no trailing space for an empty message', () => {
      expect(formatReply('g', notFound('job', 'p.x'))).to.equal('g ERROR not_found job "p.x" does not exist\n');
      expect(formatReply('g', notFound('rule', 'rr.x'))).to.equal('g ERROR not_found rule "rr.x" does not exist\n');
      expect(formatReply('e', invalidArgs('missing job identifier'))).to.equal('e ERROR invalid_args missing job identifier\n');
      expect(formatReply('d', denied())).to.equal('d ERROR auth_denied insufficient namespace scope\n');
      expect(formatReply('i', internal())).to.equal('i ERROR internal\n');
    });

    it('never lets a line break inside a line', () => {
      expect(formatReply('e', invalidArgs('bad\r\nthing'))).to.equal('e ERROR invalid_args bad  thing\n');
      expect(formatReply('r\r1', { ok: true, kind: 'done' })).to.equal('r 1 OK\n');
      const evil: Rule = { id: 'ev', pattern: 'ev.', runner: { type: 'shell', command: 'a\n1 OK' } };
      const text = formatReply('l', { ok: true, kind: 'rules', rules: [evil], next: null });
      expect(text).to.equal('l ev ev. shell "a\\n1 OK"\nl OK\n');
    });
  });

  it('pre-auth replies, AUTH OK and the too-long reply', () => {
    expect(formatAuthOk()).to.equal('OK\n');
    expect(formatPreAuthError('auth_required')).to.equal('ERROR auth_required\n');
    expect(formatPreAuthError('auth_failed')).to.equal('ERROR auth_failed\n');
    expect(formatTooLong('big')).to.equal('big ERROR invalid_args line too long\n');
  });

  it('runnerTokens and formatRuleArgs', () => {
    expect(runnerTokens({ type: 'awf', workflow: 'w', inputs: ['a=1', 'b=2'] })).to.deep.equal(['awf', 'w', '--input', 'a=1', '--input', 'b=2']);
    expect(runnerTokens({ type: 'redis', url: 'redis://h', command: 'SET', key: 'k' })).to.deep.equal(['redis', 'redis://h', 'SET', 'k']);
    expect(formatRuleArgs(RULES[2]!)).to.equal('ls.direct ls.direct. direct /bin/echo a "b c" "" "tab\tx" "q\\""');
  });

  it('round trip: each LISTRULES line tokenizes and parses back into the same rule.set', () => {
    const text = formatReply('l', { ok: true, kind: 'rules', rules: RULES, next: null });
    const lines = text.split('\n').slice(0, RULES.length);
    lines.forEach((line, i) => {
      const tokens = tokenize(line);
      expect(tokens, line).to.not.equal(null);
      expect(tokens![0]).to.equal('l');
      const parsed = parseLine(['p', 'RULE', 'SET', ...tokens!.slice(1)]);
      expect(parsed, line).to.deep.equal({ kind: 'command', rid: 'p', cmd: { op: 'rule.set', rule: RULES[i] } });
    });
  });
});
