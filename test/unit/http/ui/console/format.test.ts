// The console's pure helpers (lib/http/ui/console/format.js, a browser ES module that Node
// imports as is): exact integer parsing, nanosecond <-> ISO display, runner descriptions and
// the rule form's request body.
import { expect } from 'chai';

interface Format {
  parseExact(text: string): unknown;
  nsToIso(ns: unknown): string | null;
  isoFromNow(minutes: number, now?: number): string;
  formatDuration(ns: unknown): string;
  runnerDetails(runner: unknown): Array<[string, string]>;
  lines(text: string): string[];
  ruleBody(form: Record<string, string>): unknown;
  countByStatus(jobs: Array<{ status: string }>, statuses: string[]): { counts: Record<string, number>; total: number };
  nodeLabel(view: unknown): string | null;
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

  it('countByStatus counts every status, absent ones as zero', () => {
    const { counts, total } = f.countByStatus([{ status: 'planned' }, { status: 'failed' }, { status: 'planned' }], ['planned', 'triggered', 'executed', 'failed']);
    expect(counts).to.deep.equal({ planned: 2, triggered: 0, executed: 0, failed: 1 });
    expect(total).to.equal(3);
  });
});
