// The fold child: lowest CPU priority on every thread, outputs it creates exclusively,
// respawned after a loss, retired when idle, and gone once its primary is gone.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { encodeRecord } from '../../lib/logfile/codec.ts';
import bunyan from 'bunyan';
import { FoldProcess, findChrt, type FoldProcessOptions } from '../../cluster/fold-process.ts';
import type { LogRecord } from '../../lib/engine/journal.ts';
import { waitFor } from '../helpers/client.ts';
import { alive, childrenRunning } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';

const SCHED_IDLE = 5;
const RUNNER = new URL('../../cluster/fold-process.ts', import.meta.url);
const job = (id: string, execution: bigint): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });

const policyOf = (pid: number, tid: string): number => Number(/^policy\s*:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'))?.[1]);

function sourceFile(dir: string): string {
  const src = join(dir, 'src');
  writeFileSync(src, Buffer.concat([job('a', 1n), job('b', 1n), job('a', 2n)].map(encodeRecord)));
  return src;
}

/** Runs body with a new FoldProcess, closed after it whatever happens. */
async function withFolds(body: (folds: FoldProcess) => Promise<void>, opts: FoldProcessOptions = {}): Promise<void> {
  const folds = new FoldProcess(opts);
  try {
    await body(folds);
  } finally {
    await folds.close();
  }
}

describe('cluster/fold-process', function () {
  before(function () {
    if (process.platform !== 'linux') this.skip(); // /proc
  });

  it('runs folds in a child whose every thread has nice 19, under SCHED_IDLE where chrt exists', async () => {
    await withFolds(async (folds) => {
      folds.start();
      const pid = folds.pid!;
      const tids = () => readdirSync(`/proc/${pid}/task`);
      await waitFor(() => tids().length > 1 && tids().every((tid) => getPriority(Number(tid)) === 19), 10_000, 'nice 19 on every thread');
      const viaChrt = findChrt() !== null;
      expect(new Set(tids().map((tid) => policyOf(pid, tid)))).to.deep.equal(new Set([viaChrt ? SCHED_IDLE : 0]));
      const dir = tempDir();
      expect(await folds.run(sourceFile(dir), join(dir, 'out')).result).to.include({ inputRecords: 3, outputRecords: 2 });
      expect(folds.pid).to.equal(pid); // the child spawned serves the job
    });
  });

  it('spawns the child for a job and retires it once idle; the next job spawns another', async () => {
    await withFolds(async (folds) => {
      expect(folds.pid).to.equal(undefined); // none until there is work
      const dir = tempDir();
      const run = folds.run(sourceFile(dir), join(dir, 'out1'));
      const first = folds.pid!;
      expect(await run.result).to.include({ outputRecords: 2 });
      expect(await folds.run(sourceFile(dir), join(dir, 'out2')).result).to.include({ outputRecords: 2 });
      expect(folds.pid).to.equal(first); // a job within the linger reuses it
      await waitFor(() => folds.pid === undefined && !alive(first), 10_000, 'the idle child to be retired');
      expect(await folds.run(sourceFile(dir), join(dir, 'out3')).result).to.include({ outputRecords: 2 });
      expect(folds.pid).to.not.equal(first);
    }, { lingerMs: 300 });
  });

  it('does not retire a child while a fold runs: a linger of 1 ms, folds of 100+ ms (the child\'s start included)', async () => {
    await withFolds(async (folds) => {
      const dir = tempDir();
      for (const out of ['out1', 'out2', 'out3']) {
        const run = folds.run(sourceFile(dir), join(dir, out));
        const pid = folds.pid!;
        expect(await run.result).to.include({ outputRecords: 2 });
        expect(pid).to.be.a('number');
      }
    }, { lingerMs: 1 });
  });

  it('never writes into a file that already exists (an orphan\'s or a leftover output)', async () => {
    await withFolds(async (folds) => {
      const dir = tempDir();
      const out = join(dir, 'out');
      writeFileSync(out, 'someone else\'s');
      const failed = await folds.run(sourceFile(dir), out).result.then(() => null, (err: Error) => err);
      expect(failed?.message).to.match(/EEXIST/);
      expect(readFileSync(out, 'utf8')).to.equal('someone else\'s');
    });
  });

  it('a cancelled fold fails, and the next one runs in a new child', async () => {
    await withFolds(async (folds) => {
      const dir = tempDir();
      folds.start();
      const first = folds.pid!;
      const run = folds.run(sourceFile(dir), join(dir, 'out1'));
      run.cancel();
      expect(await run.result.then(() => 'done', (err: Error) => err.message)).to.match(/without a result/);
      expect(await folds.run(sourceFile(dir), join(dir, 'out2')).result).to.include({ outputRecords: 2 });
      expect(folds.pid).to.not.equal(first);
      expect(alive(first)).to.equal(false);
    });
  });

  it('goes on without SCHED_IDLE when chrt refuses it, warning once', async () => {
    const dir = tempDir();
    const chrt = join(dir, 'chrt'); // as chrt does where sched_setscheduler is forbidden
    writeFileSync(chrt, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const warnings: string[] = [];
    const log = bunyan.createLogger({ name: 'test', streams: [{ type: 'raw', level: 'warn', stream: { write: (r: object) => { warnings.push((r as { msg: string }).msg); } } }] });
    // refused while idle (spawned at startup), then while a fold waits for the child
    for (const startFirst of [true, false]) {
      warnings.length = 0;
      await withFolds(async (folds) => {
        if (startFirst) {
          folds.start();
          await waitFor(() => warnings.length > 0, 10_000, 'the warning');
        }
        expect(await folds.run(sourceFile(dir), join(dir, `out-${startFirst}-1`)).result).to.include({ outputRecords: 2 });
        const pid = folds.pid!;
        expect(policyOf(pid, String(pid))).to.equal(0);
        expect(getPriority(pid)).to.equal(19);
        expect(await folds.run(sourceFile(dir), join(dir, `out-${startFirst}-2`)).result).to.include({ outputRecords: 2 });
        expect(folds.pid).to.equal(pid);
        expect(warnings).to.deep.equal(['the compaction child could not start under chrt --idle; it runs at nice 19 only']);
      }, { chrt, log });
    }
  });

  it('the child ends when its primary dies', async () => {
    const script = `const { FoldProcess } = await import(${JSON.stringify(RUNNER.href)});
      new FoldProcess().start();
      setInterval(() => {}, 1000);`;
    const primary = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    try {
      let child = 0;
      await waitFor(() => { [child = 0] = childrenRunning(primary.pid!, 'fold-child.ts'); return child > 0; }, 10_000, 'the fold child');
      primary.kill('SIGKILL');
      await waitFor(() => !alive(child), 10_000, 'the orphaned fold child to end');
    } finally {
      primary.kill('SIGKILL');
    }
  });
});
