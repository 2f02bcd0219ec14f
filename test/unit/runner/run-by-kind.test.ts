import { expect } from 'chai';
import type { RunnerSpec } from '../../../lib/domain/runner-spec.ts';
import { runExecution } from '../../../lib/runner/run-by-kind.ts';
import { capturingContext, makeExecution, neverAborted } from '../../helpers/runner-context.ts';

describe('runner/run', () => {
  it('dispatches on the runner kind and tags log lines with attempt, job and kind', async () => {
    const { ctx, lines } = capturingContext();
    const exec = makeExecution({ type: 'http', method: 'GET', url: 'gopher://nowhere' });
    expect(await runExecution(exec, ctx, neverAborted())).to.deep.equal({ kind: 'runner_error', error: 'http url must start with http:// or https://' });
    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(record).to.include({ attempt: exec.attempt, job: exec.jobId, runner: 'http' });
  });

  it('fails, without throwing, on an unknown runner kind', async () => {
    const { ctx, lines } = capturingContext();
    const exec = makeExecution({ type: 'telepathy' } as unknown as RunnerSpec);
    expect(await runExecution(exec, ctx, neverAborted())).to.deep.equal({ kind: 'runner_error', error: 'unknown runner kind' });
    expect(lines.join('\n')).to.include('unknown runner kind');
  });

  it('turns a runner that throws into a failure', async () => {
    const { ctx, lines } = capturingContext();
    const exec = makeExecution({ type: 'direct', executable: '/bin/true', args: null } as unknown as RunnerSpec);
    expect(await runExecution(exec, ctx, neverAborted())).to.deep.equal({ kind: 'runner_error', error: 'the runner failed unexpectedly' });
    expect(lines.join('\n')).to.include('runner threw unexpectedly');
  });
});
