// What tickd ctl prints (lib/ctl/output.ts, watch-view.ts) and how it reads the daemon's lines
// (lib/client/replies.ts and rules.ts, which ctl reads with; import-line.ts): exact nanoseconds in every format, aligned tables,
// colour only when asked, jobs named OK or ERROR, JSON lines without float rounding.
import { expect } from 'chai';
import {
  JOB_DETAIL_HEADER, JOB_HEADER, JsonArrayWriter, TABLE_SAMPLE, TableWriter, colorStatus, formatTime, jobCells, jobDetailCells, jobDetailJson, jobJson,
  ruleCells, ruleJson, statJson,
} from '../../../lib/ctl/output.ts';
import { parseAnswer, parseAttemptLine, parseJobBody, parseJobLine, parseStatLine, type Attempt as AttemptLine } from '../../../lib/client/replies.ts';
import { readRuleLine as parseRuleLine } from '../../../lib/client/rules.ts';
import { formatReply } from '../../../lib/protocol/format.ts';
import type { Attempt } from '../../../lib/domain/attempt.ts';
import { parseImportLine } from '../../../lib/ctl/import-line.ts';
import { formatRuleArgs } from '../../../lib/domain/arguments.ts';
import type { Rule } from '../../../lib/domain/rule.ts';

const NOW = 1_775_822_400_000_000_000n;

describe('ctl/output', () => {
  it('formats times as RFC 3339 UTC with all nine fraction digits, exactly', () => {
    expect(formatTime(1_775_822_400_123_456_789n)).to.equal('2026-04-10T12:00:00.123456789Z');
    expect(formatTime(1_775_822_400_000_000_000n)).to.equal('2026-04-10T12:00:00.000000000Z');
    expect(formatTime(1_775_822_400_500_000_000n)).to.equal('2026-04-10T12:00:00.500000000Z');
    expect(formatTime(-1n)).to.equal('1969-12-31T23:59:59.999999999Z');
    expect(formatTime(9_223_372_036_854_775_807n)).to.equal('2262-04-11T23:47:16.854775807Z');
  });

  it('aligns a table under its header and prints nothing for no rows', () => {
    const t = new TableWriter(JOB_HEADER, { statusColumn: 1 });
    const text = t.add(jobCells({ id: 'mail.welcome.42', status: 'planned', execution: 1n })) + t.add(jobCells({ id: 'x', status: 'failed', execution: 2n })) + t.end();
    expect(text.split('\n')).to.deep.equal([
      'ID               STATUS   EXECUTION',
      'mail.welcome.42  planned  1970-01-01T00:00:00.000000001Z',
      'x                failed   1970-01-01T00:00:00.000000002Z',
      '',
    ]);
    expect(new TableWriter(JOB_HEADER).end()).to.equal('');
  });

  it('streams a big table: nothing until the sample is full, then every row at once', () => {
    const t = new TableWriter(['A']);
    let out = '';
    for (let i = 0; i < TABLE_SAMPLE - 1; i++) out += t.add([`r${i}`]);
    expect(out).to.equal('');
    out += t.add(['last-of-sample']);
    expect(out.split('\n')).to.have.length(TABLE_SAMPLE + 2);
    expect(t.add(['after'])).to.equal('after\n');
  });

  it('colours statuses only when told to, padding by the visible width', () => {
    expect(colorStatus('executed', false)).to.equal('executed');
    expect(colorStatus('executed', true)).to.equal('\x1b[32mexecuted\x1b[0m');
    expect(colorStatus('failed', true)).to.equal('\x1b[31mfailed\x1b[0m');
    const t = new TableWriter(JOB_HEADER, { statusColumn: 1, color: true });
    const text = t.add(['a', 'planned', 'T']) + t.end();
    expect(text).to.equal('ID  STATUS   EXECUTION\na   \x1b[36mplanned\x1b[0m  T\n');
  });

  it('writes JSON with exact integers, HTTP shapes, and STAT numbers as numbers', () => {
    expect(jobJson({ id: 'a', status: 'planned', execution: 1_893_466_800_123_456_789n })).to.equal('{"id":"a","status":"planned","execution":1893466800123456789}');
    const rule: Rule = { id: 'r', pattern: '', runner: { type: 'direct', executable: '/bin/echo', args: ['a b', '"q"'] } };
    expect(ruleJson(rule)).to.equal('{"id":"r","pattern":"","runner":{"type":"direct","executable":"/bin/echo","args":["a b","\\"q\\""]}}');
    expect(ruleCells(rule)).to.deep.equal(['r', '""', 'direct /bin/echo "a b" "\\"q\\""']);
    const limited: Rule = { ...rule, options: { concurrency: 2, rate: { limit: 4, per: 60_000_000_000n } } };
    expect(ruleJson(limited)).to.equal('{"id":"r","pattern":"","runner":{"type":"direct","executable":"/bin/echo","args":["a b","\\"q\\""]},"concurrency":2,"rate":{"limit":4,"per":"1m"}}');
    expect(statJson([['uptime_ns', '9007199254740993'], ['persistence', 'memory']])).to.equal('{"uptime_ns":9007199254740993,"persistence":"memory"}');
    const arr = new JsonArrayWriter();
    expect(arr.add('1') + arr.add('2') + arr.end()).to.equal('[\n1,\n2\n]\n');
    expect(new JsonArrayWriter().end()).to.equal('[]\n');
  });
});

describe('ctl/replies', () => {
  it('reads answers, job lines (also of jobs named OK and ERROR), rule and STAT lines', () => {
    expect(parseAnswer('OK')).to.deep.equal({ ok: true, body: '' });
    expect(parseAnswer('OK planned 5')).to.deep.equal({ ok: true, body: 'planned 5' });
    expect(parseAnswer('ERROR not_found job "x" does not exist')).to.deep.equal({ ok: false, code: 'not_found', message: 'job "x" does not exist' });
    expect(parseAnswer('ERROR internal')).to.deep.equal({ ok: false, code: 'internal', message: '' });
    expect(parseAnswer('planned 5')).to.equal(null);
    expect(parseJobLine('OK planned 1893466800123456789')).to.deep.equal({ id: 'OK', status: 'planned', execution: 1_893_466_800_123_456_789n });
    expect(parseJobLine('ERROR executed -5')).to.deep.equal({ id: 'ERROR', status: 'executed', execution: -5n });
    expect(parseJobLine('ERROR invalid_args bad')).to.equal(null);
    expect(parseJobBody('x', 'triggered 7')).to.deep.equal({ id: 'x', status: 'triggered', execution: 7n });
    expect(parseJobBody('x', 'weird 7')).to.equal(null);
    expect(parseStatLine('jobs_total 3')).to.deep.equal(['jobs_total', '3']);
  });

  it('reads back every rule the protocol formatter writes', () => {
    const rules: Rule[] = [
      { id: 'r1', pattern: 'a.', runner: { type: 'shell', command: 'echo "hi" \\ there' } },
      { id: 'r2', pattern: '', runner: { type: 'awf', workflow: 'wf', inputs: ['k=v w'] } },
      { id: 'ERROR', pattern: 'internal', runner: { type: 'http', method: 'POST', url: 'http://h/x' } },
      { id: 'r4', pattern: 'b', runner: { type: 'redis', url: 'redis://h', command: 'RPUSH', key: '' } },
      {
        id: 'r5', pattern: 'c.', runner: { type: 'direct', executable: '/bin/echo', args: ['x=1'] },
        options: { retry: { attempts: 3, backoff: 'fixed', delay: 1_000_000_000n, factor: 2, maxDelay: 5_000_000_000n, jitter: 0.5 }, concurrency: 2, rate: { limit: 4, per: 60_000_000_000n } },
      },
    ];
    for (const r of rules) expect(parseRuleLine(formatRuleArgs(r))).to.deep.equal(r);
    expect(parseRuleLine('internal')).to.equal(null);
    expect(parseRuleLine('invalid_args bad thing')).to.equal(null);
  });

  it('reads back the attempt lines the protocol formatter writes; job get prints them as columns and "attempts"', () => {
    const attempts: Attempt[] = [
      { rule: 'r.', runner: 'shell', startedNs: 1_893_466_800_000_000_007n, latenessNs: -3n, durationNs: 5n, outcome: { kind: 'exit', status: 3, stderr: '' } },
      { rule: 'r.', runner: 'http', startedNs: 9n, latenessNs: 1n, durationNs: 2n, number: 2, heldNs: 40n, outcome: { kind: 'network_error', error: 'say "no"' } },
    ];
    const job = { id: 'j', status: 'failed', execution: 1n } as const;
    const lines = formatReply('a', { ok: true, kind: 'job', job, attempts }).split('\n').slice(0, 2).map((l) => l.slice(2));
    const read = lines.map(parseAttemptLine) as AttemptLine[];
    expect(read).to.deep.equal([
      { attempt: 1, startedNs: 1_893_466_800_000_000_007n, latenessNs: -3n, heldNs: 0n, durationNs: 5n, success: false, summary: 'exit status 3' },
      { attempt: 2, startedNs: 9n, latenessNs: 1n, heldNs: 40n, durationNs: 2n, success: false, summary: 'network error: say "no"' },
    ]);
    for (const bad of ['OK', 'ERROR not_found job "j" does not exist', '0 1 1 1 1 failure x', '1 1 1 1 1 maybe x', '1 1 1 1 x failure y', '1 1 1 1 1 failure']) {
      expect(parseAttemptLine(bad), bad).to.equal(null);
    }

    const t = new TableWriter(JOB_DETAIL_HEADER, { statusColumn: 1 });
    expect(t.add(jobDetailCells(job, read)) + t.end()).to.equal(
      'ID  STATUS  EXECUTION                       ATTEMPTS  LAST OUTCOME\n' +
      'j   failed  1970-01-01T00:00:00.000000001Z  2         failure: network error: say "no"\n');
    expect(jobDetailCells(job, [])).to.deep.equal(['j', 'failed', '1970-01-01T00:00:00.000000001Z', '0', '-']);
    expect(jobDetailJson(job, read)).to.equal('{"id":"j","status":"failed","execution":1,"attempts":[' +
      '{"attempt":1,"started_ns":1893466800000000007,"lateness_ns":-3,"held_ns":0,"duration_ns":5,"success":false,"summary":"exit status 3"},' +
      '{"attempt":2,"started_ns":9,"lateness_ns":1,"held_ns":40,"duration_ns":2,"success":false,"summary":"network error: say \\"no\\""}]}');
    expect(jobDetailJson(job, [])).to.equal('{"id":"j","status":"failed","execution":1,"attempts":[]}');
  });
});

describe('ctl/import-line', () => {
  it('reads ID WHEN lines in every WHEN form, with spaces or tabs', () => {
    expect(parseImportLine('a.1 1893466800123456789', NOW)).to.deep.equal({ kind: 'job', id: 'a.1', ns: String(1_893_466_800_123_456_789n) });
    expect(parseImportLine('  a.2\t+1s  ', NOW)).to.deep.equal({ kind: 'job', id: 'a.2', ns: String(NOW + 1_000_000_000n) });
    expect(parseImportLine('a.3 2026-04-10 12:00:00', NOW)).to.deep.equal({ kind: 'job', id: 'a.3', ns: String(NOW) });
    expect(parseImportLine('a.4 2026-04-10T12:00:00Z', NOW)).to.deep.equal({ kind: 'job', id: 'a.4', ns: String(NOW) });
  });

  it('keeps every digit of nanoseconds, and the i64 bounds, on the quick path too', () => {
    expect(parseImportLine('a 8999999999999999999', NOW)).to.deep.equal({ kind: 'job', id: 'a', ns: '8999999999999999999' });
    expect(parseImportLine('a 9223372036854775807', NOW)).to.deep.equal({ kind: 'job', id: 'a', ns: '9223372036854775807' });
    expect(parseImportLine('a -9223372036854775808', NOW)).to.deep.equal({ kind: 'job', id: 'a', ns: '-9223372036854775808' });
    expect(parseImportLine('a 00000000000000000000042', NOW)).to.deep.equal({ kind: 'job', id: 'a', ns: '42' });
    expect(parseImportLine('a 9223372036854775808', NOW)).to.have.property('message').that.matches(/out of range/);
    expect(parseImportLine('a/b 5', NOW)).to.have.property('message').that.matches(/invalid character/);
  });

  it('reads JSON lines without rounding execution, or with a WHEN string', () => {
    expect(parseImportLine('{"id":"j.1","execution":1893466800123456789,"status":"executed"}', NOW)).to.deep.equal({ kind: 'job', id: 'j.1', ns: String(1_893_466_800_123_456_789n) });
    expect(parseImportLine('{"id":"j.2","execution":"+5m"}', NOW)).to.deep.equal({ kind: 'job', id: 'j.2', ns: String(NOW + 300_000_000_000n) });
  });

  it('skips blank and comment lines', () => {
    for (const l of ['', '   ', '# a comment', '\t']) expect(parseImportLine(l, NOW)).to.deep.equal({ kind: 'skip' });
  });

  it('says what is wrong with a bad line', () => {
    const msg = (l: string) => (parseImportLine(l, NOW) as { message: string }).message;
    expect(msg('lonely')).to.equal('expected ID WHEN');
    expect(msg('bad/id 5')).to.match(/job identifier contains invalid character '\/'/);
    expect(msg('a.1 soon')).to.match(/^invalid WHEN "soon"/);
    expect(msg('{"id":"a"')).to.match(/^not valid JSON/);
    expect(msg('{"execution":5}')).to.equal('missing "id" (a string)');
    expect(msg('{"id":"a","execution":1.5}')).to.match(/must be integer nanoseconds or a WHEN string/);
    expect(msg('{"id":"a","execution":99999999999999999999}')).to.match(/out of range/);
    expect(msg('[1]')).to.equal('expected ID WHEN');
  });
});
