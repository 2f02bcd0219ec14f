import { expect } from 'chai';
import bunyan from 'bunyan';
import { createLogger } from '../../lib/log.ts';

describe('log levels', () => {
  it('maps the six levels of the spec; trace behaves like debug; off silences everything', () => {
    expect(createLogger('error', 't').level()).to.equal(bunyan.ERROR);
    expect(createLogger('warn', 't').level()).to.equal(bunyan.WARN);
    expect(createLogger('info', 't').level()).to.equal(bunyan.INFO);
    expect(createLogger('debug', 't').level()).to.equal(bunyan.DEBUG);
    expect(createLogger('trace', 't').level()).to.equal(bunyan.DEBUG);
    const off = createLogger('off', 't');
    expect(off.level()).to.be.greaterThan(bunyan.FATAL);
    expect(off.fatal()).to.equal(false);
  });
});
