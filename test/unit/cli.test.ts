import { expect } from 'chai';
import { parseCli } from '../../lib/cli.ts';

describe('cli', () => {
  it('runs with defaults', () => {
    const a = parseCli([]);
    expect(a.mode).to.equal('run');
    if (a.mode !== 'run') return;
    expect(a.config).to.equal(null);
    expect(a.workers).to.be.at.least(1);
    expect(a.maxInflight).to.equal(256);
    expect(a.pidfile).to.equal(null);
    expect(a.tickSliceUs).to.equal(100);
  });
  it('reads every flag', () => {
    expect(parseCli(['-c', 'x.toml', '-w', '3', '--pidfile', 'p', '--max-inflight', '9', '--tick-slice', '250'])).to.deep.equal({ mode: 'run', config: 'x.toml', workers: 3, pidfile: 'p', maxInflight: 9, tickSliceUs: 250 });
    expect(parseCli(['--tick-slice', '0'])).to.include({ tickSliceUs: 0 });
    expect(parseCli(['--tick-slice', '100000'])).to.include({ tickSliceUs: 100000 });
    expect(parseCli(['--config', 'x.toml', '--workers', '2'])).to.include({ config: 'x.toml', workers: 2 });
    expect(parseCli(['--check', '-c', 'x'])).to.deep.equal({ mode: 'check', config: 'x' });
    expect(parseCli(['--version']).mode).to.equal('version');
    expect(parseCli(['-V']).mode).to.equal('version');
    expect(parseCli(['-h']).mode).to.equal('help');
    expect(parseCli(['dump', 'log', '--format', 'json'])).to.deep.equal({ mode: 'dump', argv: ['log', '--format', 'json'] });
  });
  for (const argv of [['--bogus'], ['-c'], ['-w', '0'], ['-w', 'two'], ['--max-inflight', '-1'], ['--tick-slice', '99'], ['--tick-slice', '100001'], ['--tick-slice', '1e3'], ['extra'], ['-c', '']]) {
    it(`usage error for ${argv.join(' ')}`, () => expect(parseCli(argv).mode).to.equal('usage-error'));
  }
});
