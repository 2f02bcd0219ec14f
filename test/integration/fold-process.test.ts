// The fold child: lowest CPU priority on every thread, outputs it creates exclusively,
// respawned after a loss, retired when idle, and gone once its primary is gone; started by
// a spawner, which shares one channel among the children (jobs and answers of another
// generation dropped) and is replaced should it die. How a channel's child end survives a
// child's exit: fold-spawner.test.ts.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { encodeRecord } from '../../lib/logfile/codec.ts';
import bunyan from 'bunyan';
import { FoldProcess, findChrt, type FoldProcessOptions } from '../../cluster/fold-process.ts';
import { SPAWNER_NAME } from '../../cluster/fold-spawner.ts';
import type { LogRecord } from '../../lib/engine/journal.ts';
import { waitFor } from '../helpers/client.ts';
import { alive, childPids, childrenRunning, descendantsRunning, pause } from '../helpers/procfs.ts';
import { tempDir } from '../helpers/tmp.ts';

const SCHED_IDLE = 5;
const RUNNER = new URL('../../cluster/fold-process.ts', import.meta.url);
const job = (id: string, execution: bigint): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });

const policyOf = (pid: number, tid: string): number => Number(/^policy\s*:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'))?.[1]);

/** A log of 3 + `more` records, which folds into 2 + `more`. */
function sourceFile(dir: string, more = 0): string {
  const src = join(dir, `src${more}`);
  const extra = Array.from({ length: more }, (_, i) => job(`x${i}`, 1n));
  writeFileSync(src, Buffer.concat([job('a', 1n), job('b', 1n), job('a', 2n), ...extra].map(encodeRecord)));
  return src;
}

/** A logger whose warnings land in `warnings`. */
function warningLog(): { log: bunyan; warnings: string[] } {
  const warnings: string[] = [];
  const log = bunyan.createLogger({ name: 'test', streams: [{ type: 'raw', level: 'warn', stream: { write: (r: object) => { warnings.push((r as { msg: string }).msg); } } }] });
  return { log, warnings };
}

/** The pid of the child of `folds`, once the spawner has reported it. */
async function childPid(folds: FoldProcess): Promise<number> {
  await waitFor(() => folds.pid !== undefined, 10_000, 'the fold child\'s pid');
  return folds.pid!;
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
      const pid = await childPid(folds);
      const tids = () => readdirSync(`/proc/${pid}/task`);
      await waitFor(() => tids().length > 1 && tids().every((tid) => getPriority(Number(tid)) === 19), 10_000, 'nice 19 on every thread');
      const viaChrt = findChrt() !== null;
      expect(new Set(tids().map((tid) => policyOf(pid, tid)))).to.deep.equal(new Set([viaChrt ? SCHED_IDLE : 0]));
      const dir = tempDir();
      expect(await folds.run(sourceFile(dir), join(dir, 'out')).result).to.include({ inputRecords: 3, outputRecords: 2 });
      expect(folds.pid).to.equal(pid); // the child spawned serves the job
    });
  });

  it('spawns the child for a job and retires it once idle; the next job spawns another; close() ends the spawner', async () => {
    let spawner = 0;
    await withFolds(async (folds) => {
      expect(folds.pid).to.equal(undefined); // none until there is work
      spawner = folds.spawnerPid!;
      expect(alive(spawner)).to.equal(true);
      const dir = tempDir();
      const run = folds.run(sourceFile(dir), join(dir, 'out1'));
      const first = await childPid(folds);
      expect(await run.result).to.include({ outputRecords: 2 });
      expect(await folds.run(sourceFile(dir), join(dir, 'out2')).result).to.include({ outputRecords: 2 });
      expect(folds.pid).to.equal(first); // a job within the linger reuses it
      await waitFor(() => folds.pid === undefined && !alive(first), 10_000, 'the idle child to be retired');
      expect(await folds.run(sourceFile(dir), join(dir, 'out3')).result).to.include({ outputRecords: 2 });
      expect(folds.pid).to.not.equal(first);
    }, { lingerMs: 300 });
    expect(alive(spawner)).to.equal(false);
  });

  it('does not retire a child while a fold runs: a linger of 1 ms, folds of 100+ ms (the child\'s start included)', async () => {
    await withFolds(async (folds) => {
      const dir = tempDir();
      for (const out of ['out1', 'out2', 'out3']) {
        const run = folds.run(sourceFile(dir), join(dir, out));
        expect(await childPid(folds)).to.be.a('number'); // the fold (in a child still starting) holds it
        expect(await run.result).to.include({ outputRecords: 2 });
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
      const first = await childPid(folds);
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
    const { log, warnings } = warningLog();
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

  it('a job a killed child left unread is not run by the next child, and the next job gets the next child\'s answer', async () => {
    await withFolds(async (folds) => {
      const dir = tempDir();
      folds.start();
      const first = await childPid(folds);
      await pause(first); // it cannot read the job: the job stays in the channel the children share
      const unread = folds.run(sourceFile(dir), join(dir, 'out1'));
      process.kill(first, 'SIGKILL');
      expect(await unread.result.then(() => 'done', (err: Error) => err.message)).to.match(/SIGKILL.*without a result/);
      expect(await folds.run(sourceFile(dir, 2), join(dir, 'out2')).result).to.include({ inputRecords: 5, outputRecords: 4 });
      expect(folds.pid).to.not.equal(first);
      expect(existsSync(join(dir, 'out1'))).to.equal(false);
    });
  });

  it('an answer of another generation in the channel does not settle a job', async () => {
    const dir = tempDir();
    // Runs the child without SCHED_IDLE, after writing into the channel what a dead child
    // of the generation before could have left there.
    const chrt = join(dir, 'chrt');
    const stale = '{"t":"folded","gen":%d,"result":{"inputRecords":99,"outputRecords":99}}';
    writeFileSync(chrt, `#!/bin/sh\nfor gen; do :; done\nprintf '${stale}\\n' $((gen - 1)) >&3\nshift 2\nexec "$@"\n`, { mode: 0o755 });
    for (const shell of ['/bin/sh', null]) {
      await withFolds(async (folds) => {
        expect(await folds.run(sourceFile(dir), join(dir, `out-${shell === null ? 'direct' : 'spawner'}`)).result).to.include({ inputRecords: 3, outputRecords: 2 });
      }, { chrt, shell });
    }
  });

  it('a job still runs after the spawner was killed: the job it held fails, its child ends, a new spawner starts the next', async () => {
    const { log, warnings } = warningLog();
    await withFolds(async (folds) => {
      const dir = tempDir();
      folds.start();
      const first = await childPid(folds);
      const spawner = folds.spawnerPid!;
      await pause(first); // it must not finish the job before its spawner is gone
      const held = folds.run(sourceFile(dir), join(dir, 'out1'));
      process.kill(spawner, 'SIGKILL');
      expect(await held.result.then(() => 'done', (err: Error) => err.message)).to.match(/spawner ended \(SIGKILL\)/);
      process.kill(first, 'SIGCONT');
      await waitFor(() => !alive(first), 10_000, 'the lost spawner\'s child to end (its channel closed)');
      expect(await folds.run(sourceFile(dir), join(dir, 'out2')).result).to.include({ outputRecords: 2 });
      expect(folds.spawnerPid).to.be.a('number').and.not.equal(spawner);
      expect(warnings).to.deep.equal(['the compaction spawner ended; the next compaction child is started by a new one, forked then']);
    }, { log });
  });

  it('without a shell for a spawner, the primary spawns the child itself', async () => {
    await withFolds(async (folds) => {
      const dir = tempDir();
      const run = folds.run(sourceFile(dir), join(dir, 'out'));
      // A child of this process; its command line read while chrt execs node can be empty (a
      // CI run read [] here), so that is waited for.
      expect(childPids(process.pid)).to.include(folds.pid);
      await waitFor(() => childrenRunning(process.pid, 'fold-child.ts').length > 0, 10_000, 'the fold child to show its command line');
      expect(childrenRunning(process.pid, 'fold-child.ts')).to.deep.equal([folds.pid]);
      expect(folds.spawnerPid).to.equal(undefined);
      expect(await run.result).to.include({ outputRecords: 2 });
    }, { shell: null });
  });

  it('holds its process open only while a job runs, also when the job\'s child died', async () => {
    const script = `const { FoldProcess } = await import(${JSON.stringify(RUNNER.href)});
      const folds = new FoldProcess();
      folds.start();
      while (folds.pid === undefined) await new Promise((r) => setTimeout(r, 5));
      const run = folds.run('/nonexistent', '/nonexistent.out');
      process.kill(folds.pid, 'SIGKILL');
      await run.result.catch(() => {});`;
    const primary = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const ended = new Promise<number | null>((resolve) => primary.on('exit', resolve));
    try {
      await waitFor(() => primary.exitCode !== null, 10_000, 'the process to end by itself');
      expect(await ended).to.equal(0);
    } finally {
      primary.kill('SIGKILL');
    }
  });

  it('the child and the spawner end when their primary dies; the primary forks neither after startup', async () => {
    const script = `const { FoldProcess } = await import(${JSON.stringify(RUNNER.href)});
      new FoldProcess().start();
      setInterval(() => {}, 1000);`;
    const primary = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    try {
      let child = 0;
      await waitFor(() => { [child = 0] = descendantsRunning(primary.pid!, 'fold-child.ts'); return child > 0; }, 10_000, 'the fold child');
      expect(childrenRunning(primary.pid!, 'fold-child.ts')).to.deep.equal([]); // the spawner's, not the primary's
      const spawners = childrenRunning(primary.pid!, SPAWNER_NAME);
      expect(spawners).to.have.length(1);
      primary.kill('SIGKILL');
      await waitFor(() => !alive(child) && !alive(spawners[0]!), 10_000, 'the orphaned fold child and spawner to end');
    } finally {
      primary.kill('SIGKILL');
    }
  });
});
