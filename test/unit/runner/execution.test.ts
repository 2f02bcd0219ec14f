import { expect } from 'chai';
import { errorText } from '../../../lib/errors.ts';
import { DEFAULT_RUNNER_TIMEOUT_MS, runnerTimeoutMs } from '../../../lib/runner/execution.ts';
import { executionKey, executionKeys } from '../../../lib/runner/execution-key.ts';

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

  it('keys an execution by its attempt number, 1 when it has none', () => {
    const exec = { attempt: '0'.repeat(32), jobId: 'j', execution: 5n, runner: { type: 'shell' as const, command: 'true' } };
    expect(executionKeys(exec)).to.deep.equal({ key: executionKey('j', 5n, 1), attemptNo: 1 });
    expect(executionKeys({ ...exec, attemptNo: 1 })).to.deep.equal(executionKeys(exec));
    expect(executionKeys({ ...exec, attemptNo: 2 })).to.deep.equal({ key: executionKey('j', 5n, 2), attemptNo: 2 });
    expect(executionKeys({ ...exec, attemptNo: 2 }).key).to.not.equal(executionKeys(exec).key);
  });
});
