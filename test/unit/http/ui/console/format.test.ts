// The console's pure helpers (lib/http/ui/console/format.js, a browser ES module that Node
// imports as is): exact integer parsing, nanosecond <-> ISO display, durations and relative
// times, the listing's next cursor and page query, counts from STAT, runner and attempt
// descriptions and the rule form's request body.
import { expect } from 'chai';

interface Format {
  parseExact(text: string): unknown;
  nsToIso(ns: unknown): string | null;
  isoFromNow(minutes: number, now?: number): string;
  formatDuration(ns: unknown): string;
  runnerDetails(runner: unknown): Array<[string, string]>;
  lines(text: string): string[];
  ruleBody(form: Record<string, string>): unknown;
  nodeLabel(view: unknown): string | null;
  formatNs(ns: unknown): string;
  formatMs(ms: unknown): string;
  roughSpan(ms: number): string;
  relativeExecution(ns: unknown, status: string, nowMs: number): string;
  nextCursor(link: string | null): string | null;
  pageQuery(q: { limit: number; cursor?: string | null; prefix?: string; status?: string }): string;
  principalLabel(whoami: unknown): string;
  statusCounts(stats: unknown, statuses: string[]): Record<string, string>;
  outcomeDetails(outcome: unknown): Array<[string, string]>;
}

// Through a URL so the type checker does not look for declarations of a plain .js module.
const MODULE = new URL('../../../../../lib/http/ui/console/format.js', import.meta.url).href;

describe('http/ui/console/format.js', () => {
  let f: Format;
  before(async () => {
    f = (await import(MODULE)) as Format;
  });

  describe('parseExact', () => {
    it('keeps every digit of integers above 2^53 (as decimal strings)', () => {
      const text = '[{"id":"a","status":"planned","execution":1775822400123456789},{"id":"b","execution":-9223372036854775808}]';
      expect(f.parseExact(text)).to.deep.equal([
        { id: 'a', status: 'planned', execution: '1775822400123456789' },
        { id: 'b', execution: '-9223372036854775808' },
      ]);
      expect(String((JSON.parse(text) as Array<{ execution: number }>)[0]!.execution)).to.not.equal('1775822400123456789'); // what it prevents
    });
    it('leaves digits inside strings, escaped quotes included, untouched', () => {
      expect(f.parseExact('{"a\\"1":"x 123 \\"456\\" 7","n":0}')).to.deep.equal({ 'a"1': 'x 123 "456" 7', n: '0' });
    });
    it('leaves fractions, exponents and literals as JSON.parse reads them', () => {
      expect(f.parseExact('[1.5,-2.25e3,3e10,4E-2,true,null,false,12]')).to.deep.equal([1.5, -2250, 3e10, 0.04, true, null, false, '12']);
      expect(f.parseExact(' { "k" : 9007199254740993 } ')).to.deep.equal({ k: '9007199254740993' });
    });
    it('throws on invalid JSON like JSON.parse', () => {
      expect(() => f.parseExact('{"a":')).to.throw(SyntaxError);
      expect(() => f.parseExact('not json')).to.throw(SyntaxError);
    });
  });

  describe('nsToIso', () => {
    it('writes all nine fraction digits in UTC', () => {
      expect(f.nsToIso('1775822400123456789')).to.equal('2026-04-10T12:00:00.123456789Z');
      expect(f.nsToIso('4070908800000000001')).to.equal('2099-01-01T00:00:00.000000001Z');
      expect(f.nsToIso('0')).to.equal('1970-01-01T00:00:00.000000000Z');
    });
    it('floors timestamps before 1970', () => {
      expect(f.nsToIso('-1')).to.equal('1969-12-31T23:59:59.999999999Z');
      expect(f.nsToIso('-9223372036854775808')).to.equal('1677-09-21T00:12:43.145224192Z');
      expect(f.nsToIso('9223372036854775807')).to.equal('2262-04-11T23:47:16.854775807Z');
    });
    it('is null for anything but an integer string', () => {
      for (const bad of ['', '1.5', 'x', '1e9', 12, null, undefined]) expect(f.nsToIso(bad), String(bad)).to.equal(null);
    });
  });

  it('isoFromNow gives a whole-second UTC time', () => {
    expect(f.isoFromNow(60, Date.UTC(2026, 3, 10, 12, 0, 0, 999))).to.equal('2026-04-10T13:00:00Z');
  });

  it('formatDuration', () => {
    expect(f.formatDuration('0')).to.equal('0 s');
    expect(f.formatDuration('59999999999')).to.equal('59 s');
    expect(f.formatDuration('3600000000000')).to.equal('1 h');
    expect(f.formatDuration('90061000000000')).to.equal('1 d 1 h 1 min 1 s');
    expect(f.formatDuration('oops')).to.equal('oops');
  });

  it('runnerDetails describes all six kinds, quoting ambiguous arguments', () => {
    expect(f.runnerDetails({ type: 'shell', command: 'echo hi' })).to.deep.equal([['command', 'echo hi']]);
    expect(f.runnerDetails({ type: 'direct', executable: '/bin/echo', args: ['a b', '', 'c"d', 'e'] }))
      .to.deep.equal([['executable', '/bin/echo'], ['arguments', '"a b" "" "c\\"d" e']]);
    expect(f.runnerDetails({ type: 'http', method: 'POST', url: 'http://h/x' })).to.deep.equal([['method', 'POST'], ['URL', 'http://h/x']]);
    expect(f.runnerDetails({ type: 'awf', workflow: 'w', inputs: ['k=v'] })).to.deep.equal([['workflow', 'w'], ['inputs', 'k=v']]);
    expect(f.runnerDetails({ type: 'amqp', dsn: 'amqp://h', exchange: 'e', routing_key: 'r' })).to.have.length(3);
    expect(f.runnerDetails({ type: 'redis', url: 'redis://h', command: 'RPUSH', key: 'k' })).to.have.length(3);
    expect(f.runnerDetails({ type: 'future', x: 1 })).to.deep.equal([['x', '1']]);
    expect(f.runnerDetails(undefined)).to.deep.equal([]);
  });

  it('ruleBody builds the object form; multi-line fields become arrays without blank lines', () => {
    const base = { pattern: 'p.', command: 'echo', executable: '/bin/x', args: ' a b \r\n\n--c\n', method: 'PUT', url: 'http://h', workflow: 'wf', inputs: 'k=v\n\nx=y' };
    expect(f.ruleBody({ ...base, type: 'shell' })).to.deep.equal({ pattern: 'p.', runner: { type: 'shell', command: 'echo' } });
    expect(f.ruleBody({ ...base, type: 'direct' })).to.deep.equal({ pattern: 'p.', runner: { type: 'direct', executable: '/bin/x', args: ['a b', '--c'] } });
    expect(f.ruleBody({ ...base, type: 'http' })).to.deep.equal({ pattern: 'p.', runner: { type: 'http', method: 'PUT', url: 'http://h' } });
    expect(f.ruleBody({ ...base, type: 'awf' })).to.deep.equal({ pattern: 'p.', runner: { type: 'awf', workflow: 'wf', inputs: ['k=v', 'x=y'] } });
    expect(f.lines('')).to.deep.equal([]);
  });

  it('nodeLabel names the answering node and its role, or nothing', () => {
    expect(f.nodeLabel({ cluster: 'c', node: 'n2', role: 'follower', leader: 'n1', last_seq: '7', applied_seq: '7', nodes: [] })).to.equal('node n2 · follower');
    for (const bad of [null, undefined, 'x', {}, { node: 'n' }, { role: 'leader' }]) expect(f.nodeLabel(bad), String(bad)).to.equal(null);
  });

  it('formatNs writes short durations with their unit, long ones like formatDuration', () => {
    expect(f.formatNs('0')).to.equal('0 ns');
    expect(f.formatNs('850')).to.equal('850 ns');
    expect(f.formatNs('12500')).to.equal('12.5 µs');
    expect(f.formatNs('12108192')).to.equal('12.1 ms');
    expect(f.formatNs('3250000000')).to.equal('3.25 s');
    expect(f.formatNs('-3250000000')).to.equal('-3.25 s');
    expect(f.formatNs('125000000000')).to.equal('2 min 5 s');
    expect(f.formatNs('217601832315337206')).to.equal('2518 d 12 h 57 min 12 s');
    expect(f.formatNs(null)).to.equal('null');
  });

  it('formatMs writes a lateness in the largest readable unit', () => {
    expect(f.formatMs(0.44)).to.equal('0.4 ms');
    expect(f.formatMs('12')).to.equal('12 ms');
    expect(f.formatMs(3500)).to.equal('3.5 s');
    expect(f.formatMs(126000)).to.equal('2.1 min');
    expect(f.formatMs(5 * 3600000)).to.equal('5 h');
    expect(f.formatMs(3 * 86400000 + 5)).to.equal('3 d');
    expect(f.formatMs('x')).to.equal('x');
  });

  it('relativeExecution: ahead, now, late while waiting, ago when done', () => {
    const now = Date.UTC(2026, 3, 10, 12, 0, 0);
    const ns = (ms: number) => `${BigInt(ms) * 1000000n + 123456n}`;
    expect(f.relativeExecution(ns(now + 5 * 60000), 'planned', now)).to.equal('in 5 min');
    expect(f.relativeExecution(ns(now + 59999), 'planned', now)).to.equal('in 59 s');
    expect(f.relativeExecution(ns(now + 3 * 86400000), 'planned', now)).to.equal('in 3 d');
    expect(f.relativeExecution(ns(now + 30 * 3600000), 'planned', now)).to.equal('in 30 h');
    expect(f.relativeExecution(ns(now + 400), 'planned', now)).to.equal('now');
    expect(f.relativeExecution(ns(now - 3000), 'planned', now)).to.equal('3 s late');
    expect(f.relativeExecution(ns(now - 3000), 'triggered', now)).to.equal('3 s late');
    expect(f.relativeExecution(ns(now - 3000), 'executed', now)).to.equal('3 s ago');
    expect(f.relativeExecution(ns(now - 7200000), 'failed', now)).to.equal('2 h ago');
    expect(f.relativeExecution('4070908800123456789', 'planned', now)).to.equal('in 26563 d');
    expect(f.relativeExecution('oops', 'planned', now)).to.equal('');
  });

  it('nextCursor reads the cursor of a rel="next" Link header; null without one', () => {
    expect(f.nextCursor('</jobs?prefix=a.&limit=100&cursor=4242>; rel="next"')).to.equal('4242');
    expect(f.nextCursor('</rules?limit=50&cursor=7>; rel=next')).to.equal('7');
    expect(f.nextCursor('</jobs?limit=100&cursor=1>; rel="prev"')).to.equal(null);
    expect(f.nextCursor('')).to.equal(null);
    expect(f.nextCursor(null)).to.equal(null);
  });

  it('pageQuery gives limit, then cursor, prefix and status only when set', () => {
    expect(f.pageQuery({ limit: 100 })).to.equal('limit=100');
    expect(f.pageQuery({ limit: 100, cursor: '42', prefix: 'a b&c' })).to.equal('limit=100&cursor=42&prefix=a+b%26c');
    expect(f.pageQuery({ limit: 50, cursor: null, prefix: '', status: '' })).to.equal('limit=50');
    expect(f.pageQuery({ limit: 100, cursor: '7', prefix: 'a.', status: 'failed' })).to.equal('limit=100&cursor=7&prefix=a.&status=failed');
  });

  it('principalLabel names the token and its namespace; "signed in" while that is not known', () => {
    expect(f.principalLabel({ name: 'admin', namespace: '*', auth_enabled: true })).to.equal('signed in as admin (namespace *)');
    expect(f.principalLabel({ name: 'ops', namespace: 'ops.', auth_enabled: true })).to.equal('signed in as ops (namespace ops.)');
    expect(f.principalLabel(null)).to.equal('signed in');
    expect(f.principalLabel({ name: null, namespace: '*', auth_enabled: false })).to.equal('signed in');
  });

  it('statusCounts takes the jobs per status from STAT, "?" when a figure is missing', () => {
    const stats = { jobs_total: '100000', jobs_planned: '90000', jobs_triggered: '0', jobs_executed: '9000', jobs_failed: '1000' };
    expect(f.statusCounts(stats, ['planned', 'triggered', 'executed', 'failed']))
      .to.deep.equal({ planned: '90000', triggered: '0', executed: '9000', failed: '1000', total: '100000' });
    expect(f.statusCounts(null, ['planned'])).to.deep.equal({ planned: '?', total: '?' });
  });

  it('outcomeDetails names every outcome kind in its runner\'s terms', () => {
    expect(f.outcomeDetails({ kind: 'exit', status: '3', stderr: 'disk full\n' })).to.deep.equal([['exit status', '3']]);
    expect(f.outcomeDetails({ kind: 'signal', signal: 'SIGKILL', stderr: '' })).to.deep.equal([['signal', 'SIGKILL']]);
    expect(f.outcomeDetails({ kind: 'http_response', status: '503' })).to.deep.equal([['HTTP status', '503']]);
    for (const kind of ['spawn_error', 'network_error', 'broker_error', 'runner_error']) {
      expect(f.outcomeDetails({ kind, error: 'boom' }), kind).to.deep.equal([['error', 'boom']]);
    }
    for (const kind of ['delivered', 'no_rule', 'aborted']) expect(f.outcomeDetails({ kind }), kind).to.have.length(1);
    expect(f.outcomeDetails({ kind: 'no_node', on: ['db', 'eu'] })).to.deep.equal([['node', 'none live with the tags db, eu']]);
    expect(f.outcomeDetails({ kind: 'future', code: '7' })).to.deep.equal([['code', '7']]);
    expect(f.outcomeDetails(undefined)).to.deep.equal([]);
  });
});
