import { expect } from 'chai';
import { outcomeSucceeded, type AttemptOutcome } from '../../../lib/domain/attempt.ts';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { awfArgv, runAwf } from '../../../lib/runner/awf.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { capturingContext, makeExecution, neverAborted } from '../../helpers/runner-context.ts';

/** Runs the awf runner with PATH set to `path` for the duration of the call. */
async function runWithPath(path: string, workflow: string, inputs: string[]): Promise<boolean> {
  return outcomeSucceeded(await outcomeWithPath(path, workflow, inputs));
}

async function outcomeWithPath(path: string, workflow: string, inputs: string[]): Promise<AttemptOutcome> {
  const saved = process.env.PATH;
  process.env.PATH = path;
  try {
    const { ctx } = capturingContext();
    const spec = { type: 'awf' as const, workflow, inputs };
    return await runAwf(makeExecution(spec), spec, ctx, neverAborted());
  } finally {
    process.env.PATH = saved;
  }
}

function fakeAwf(exitCode: number): { dir: string; argvFile: string } {
  const dir = tempDir();
  const argvFile = join(dir, 'argv');
  // NUL-separated so arguments with spaces or newlines come back exactly.
  writeFileSync(join(dir, 'awf'), `#!/bin/sh\nprintf '%s\\0' "$@" > '${argvFile}'\nexit ${exitCode}\n`);
  chmodSync(join(dir, 'awf'), 0o755);
  return { dir, argvFile };
}

function recordedArgv(file: string): string[] {
  return readFileSync(file, 'utf8').split('\0').slice(0, -1);
}

describe('runner/awf', () => {
  it('builds awf run <workflow> followed by --input k=v for each input', () => {
    expect(awfArgv({ type: 'awf', workflow: 'wf', inputs: [] })).to.deep.equal(['awf', 'run', 'wf']);
    expect(awfArgv({ type: 'awf', workflow: 'wf', inputs: ['a=1', 'b=x y'] })).to.deep.equal(['awf', 'run', 'wf', '--input', 'a=1', '--input', 'b=x y']);
  });

  it('runs the awf found first on PATH with exactly that argv', async () => {
    const { dir, argvFile } = fakeAwf(0);
    const ok = await runWithPath(`${dir}:${process.env.PATH}`, 'deploy.site', ['env=prod', 'msg=a b;$(id)', 'empty=']);
    expect(ok).to.equal(true);
    expect(recordedArgv(argvFile)).to.deep.equal(['run', 'deploy.site', '--input', 'env=prod', '--input', 'msg=a b;$(id)', '--input', 'empty=']);
  });

  it('runs without inputs', async () => {
    const { dir, argvFile } = fakeAwf(0);
    expect(await runWithPath(dir, 'wf', [])).to.equal(true);
    expect(recordedArgv(argvFile)).to.deep.equal(['run', 'wf']);
  });

  it('fails when awf exits non-zero', async () => {
    const { dir } = fakeAwf(3);
    expect(await runWithPath(dir, 'wf', [])).to.equal(false);
  });

  it('fails when awf is not on PATH', async () => {
    expect(await runWithPath(tempDir(), 'wf', ['a=1'])).to.equal(false);
    expect(await runWithPath('', 'wf', [])).to.equal(false);
  });
});
