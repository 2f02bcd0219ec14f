import { expect } from 'chai';
import { errorText } from '../../../lib/errors.ts';
import { DEFAULT_RUNNER_TIMEOUT_MS, runnerTimeoutMs } from '../../../lib/runner/execution.ts';

describe('runner/execution', () => {
  it('reads TICKD_RUNNER_TIMEOUT_MS, falling back to 30 000 on absence or garbage', () => {
    expect(DEFAULT_RUNNER_TIMEOUT_MS).to.equal(30_000);
    expect(runnerTimeoutMs({})).to.equal(30_000);
    expect(runnerTimeoutMs({ TICKD_RUNNER_TIMEOUT_MS: '300' })).to.equal(300);
    for (const bad of ['', '0', '-5', '1.5', 'abc', '1e3', ' 300', '99999999999']) {
      expect(runnerTimeoutMs({ TICKD_RUNNER_TIMEOUT_MS: bad }), bad).to.equal(30_000);
    }
  });

  it('describes errors on one line, with their code', () => {
    expect(errorText(Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }))).to.equal('ECONNREFUSED: connect refused');
    expect(errorText(Object.assign(new Error('connect ECONNREFUSED 1.2.3.4:1'), { code: 'ECONNREFUSED' }))).to.equal('connect ECONNREFUSED 1.2.3.4:1');
    expect(errorText('plain')).to.equal('plain');
  });
});
