import { expect } from 'chai';
import bunyan from 'bunyan';
import { formatPretty, prettyStream, useColour } from '../../lib/log-format.ts';

const TIME = new Date('2026-11-21T10:00:00.123Z');
const base = { name: 'tickd', hostname: 'h', pid: 4242, v: 0, time: TIME };

describe('log-format pretty', () => {
  it('writes time, level, role[pid], component, message, then the other fields as key=value', () => {
    const line = formatPretty({ ...base, role: 'primary', component: 'logfile', level: 30, msg: 'state loaded', persistence: 'logfile', jobs: 3, ok: true, gone: null }, false);
    expect(line).to.equal('2026-11-21T10:00:00.123Z INFO  primary[4242] logfile: state loaded persistence=logfile jobs=3 ok=true gone=null\n');
    expect(formatPretty({ ...base, role: 'worker', level: 40, msg: 'authentication failed' }, false))
      .to.equal('2026-11-21T10:00:00.123Z WARN  worker[4242]: authentication failed\n');
  });

  it('names every level', () => {
    const names = [10, 20, 30, 40, 50, 60].map((level) => formatPretty({ ...base, role: 'r', level, msg: 'm' }, false).split(' ')[1]);
    expect(names).to.deep.equal(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL']);
  });

  it('keeps one record on one line: quotes values that need it, escapes control characters', () => {
    const line = formatPretty({
      ...base, role: 'primary', level: 30, msg: 'two\nlines', path: '/a b', empty: '', eq: 'k=v', big: 1893484800123456789n,
      obj: { a: [1, 'x'], n: 2n }, at: TIME,
    }, false);
    expect(line.split('\n')).to.have.length(2);
    expect(line).to.equal('2026-11-21T10:00:00.123Z INFO  primary[4242]: two\\nlines path="/a b" empty="" eq="k=v" big=1893484800123456789 obj={"a":[1,"x"],"n":"2"} at=2026-11-21T10:00:00.123Z\n');
  });

  it('shows an error by its message, name and code, never its stack', () => {
    const err = Object.assign(new TypeError('bad thing'), { code: 'EBAD' });
    const line = formatPretty({ ...base, role: 'primary', level: 50, msg: 'failed', err: bunyan.stdSerializers.err(err) }, false);
    expect(line).to.equal('2026-11-21T10:00:00.123Z ERROR primary[4242]: failed err="TypeError: bad thing (EBAD)"\n');
    expect(formatPretty({ ...base, role: 'primary', level: 50, msg: 'failed', err: new Error('plain') }, false)).to.contain(' err=plain\n');
  });

  it('colours the level only, and only when asked', () => {
    const line = formatPretty({ ...base, role: 'primary', level: 50, msg: 'failed' }, true);
    expect(line).to.equal('2026-11-21T10:00:00.123Z \u001b[31mERROR\u001b[0m primary[4242]: failed\n');
  });

  it('colours only a terminal, and never with NO_COLOR set or TERM=dumb', () => {
    expect(useColour({ isTTY: true }, {})).to.equal(true);
    expect(useColour({ isTTY: true }, { NO_COLOR: '' })).to.equal(true);
    expect(useColour({ isTTY: true }, { NO_COLOR: '1' })).to.equal(false);
    expect(useColour({ isTTY: true }, { TERM: 'dumb' })).to.equal(false);
    expect(useColour({ isTTY: false }, {})).to.equal(false);
    expect(useColour({}, {})).to.equal(false);
  });

  it('is a bunyan raw stream: one line per record, a line per call; a failing write never throws', () => {
    const lines: string[] = [];
    const log = bunyan.createLogger({ name: 'tickd', role: 'worker', streams: [{ type: 'raw', level: 'info', stream: prettyStream({ write: (s: string) => lines.push(s) }, false) as never }] });
    log.child({ component: 'http' }).info({ port: 80 }, 'listening');
    log.debug('not at this level');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}worker\[\d+\] http: listening port=80\n$/);
    const broken = prettyStream({ write: () => { throw new Error('EPIPE'); } }, false);
    expect(() => broken.write({ ...base, level: 30, msg: 'x' })).not.to.throw();
  });
});
