// The fold child: lowest CPU priority on every thread, outputs it creates exclusively,
// respawned after a loss, and gone once its primary is gone.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { encodeRecord } from '../../../lib/logfile/codec.ts';
import { FoldProcess, foldCommand } from '../../../lib/logfile/fold-runner.ts';
import type { LogRecord } from '../../../lib/logfile/record.ts';
import { waitFor } from '../../helpers/client.ts';
import { alive, childrenRunning } from '../../helpers/procfs.ts';
import { tempDir } from '../../helpers/tmp.ts';

const SCHED_IDLE = 5;
const RUNNER = new URL('../../../lib/logfile/fold-runner.ts', import.meta.url);
const job = (id: string, execution: bigint): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });

const policyOf = (pid: number, tid: string): number => Number(/^policy\s*:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'))?.[1]);

function sourceFile(dir: string): string {
  const src = join(dir, 'src');
  writeFileSync(src, Buffer.concat([job('a', 1n), job('b', 1n), job('a', 2n)].map(encodeRecord)));
  return src;
}

describe('logfile/fold-runner', function () {
  before(function () {
    if (process.platform !== 'linux') this.skip(); // /proc
  });

  it('runs folds in a child whose every thread has nice 19, under SCHED_IDLE where chrt exists', async () => {
    const folds = new FoldProcess();
    try {
      folds.start();
      const pid = folds.pid!;
      const tids = () => readdirSync(`/proc/${pid}/task`);
      await waitFor(() => tids().length > 1 && tids().every((tid) => getPriority(Number(tid)) === 19), 10_000, 'nice 19 on every thread');
      const viaChrt = foldCommand().args.includes('--idle');
      expect(new Set(tids().map((tid) => policyOf(pid, tid)))).to.deep.equal(new Set([viaChrt ? SCHED_IDLE : 0]));
      const dir = tempDir();
      expect(await folds.run(sourceFile(dir), join(dir, 'out')).result).to.include({ inputRecords: 3, outputRecords: 2 });
      expect(folds.pid).to.equal(pid); // the same child serves every cycle
    } finally {
      await folds.close();
    }
  });

  it('never writes into a file that already exists (an orphan\'s or a leftover output)', async () => {
    const folds = new FoldProcess();
    try {
      const dir = tempDir();
      const out = join(dir, 'out');
      writeFileSync(out, 'someone else\'s');
      const failed = await folds.run(sourceFile(dir), out).result.then(() => null, (err: Error) => err);
      expect(failed?.message).to.match(/EEXIST/);
      expect(readFileSync(out, 'utf8')).to.equal('someone else\'s');
    } finally {
      await folds.close();
    }
  });

  it('a cancelled fold fails, and the next one runs in a new child', async () => {
    const folds = new FoldProcess();
    try {
      const dir = tempDir();
      folds.start();
      const first = folds.pid!;
      const run = folds.run(sourceFile(dir), join(dir, 'out1'));
      run.cancel();
      expect(await run.result.then(() => 'done', (err: Error) => err.message)).to.match(/without a result/);
      expect(await folds.run(sourceFile(dir), join(dir, 'out2')).result).to.include({ outputRecords: 2 });
      expect(folds.pid).to.not.equal(first);
      expect(alive(first)).to.equal(false);
    } finally {
      await folds.close();
    }
  });

  it('the child ends when its primary dies', async () => {
    const script = `const { FoldProcess } = await import(${JSON.stringify(RUNNER.href)});
      new FoldProcess().start();
      setInterval(() => {}, 1000);`;
    const primary = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    try {
      let child = 0;
      await waitFor(() => { [child = 0] = childrenRunning(primary.pid!, 'compact-child.ts'); return child > 0; }, 10_000, 'the fold child');
      primary.kill('SIGKILL');
      await waitFor(() => !alive(child), 10_000, 'the orphaned fold child to end');
    } finally {
      primary.kill('SIGKILL');
    }
  });
});
