// A write that cannot be persisted (tickd-protocol(7) COMMANDS; doc/logfile-format.md): the
// logfile lives on a tiny tmpfs that the test fills up; the failing write is answered
// `<rid> ERROR internal`, memory is left as it was (GET, LISTRULES, STAT), the file is cut back
// to its last durable record, and once space is freed writes work again and survive a restart.
// A compaction that runs out of space leaves no partial output behind to starve the journal.
// Needs root for mount(8): skipped with a message otherwise, except under CI=true, where it
// must run.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, stat, waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { FAR_FUTURE_NS, getJob, listLines, logRecords, ok, snapshot } from './logfile-helpers.ts';

/** Writes `filler` until the filesystem refuses even one more byte; returns its size. */
function fillUp(filler: string): number {
  const fd = openSync(filler, 'w');
  let size = 0;
  try {
    for (const chunkSize of [65536, 4096, 512, 1]) {
      const chunk = Buffer.alloc(chunkSize, 0x66);
      for (;;) {
        try {
          const n = writeSync(fd, chunk);
          size += n;
          if (n < chunkSize) break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return size;
}

/** Mounts a 256 KiB tmpfs at `mnt` (mocha context for the skip); returns the unmount step. */
function mountTmpfs(ctx: Mocha.Context, mnt: string): () => void {
  mkdirSync(mnt);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt], { stdio: 'pipe' });
  } catch (err) {
    if (process.env['CI'] === 'true') throw new Error(`mount -t tmpfs failed under CI: ${(err as Error).message}`);
    console.log(`      (skipped: mounting a tmpfs needs root: ${(err as Error).message.split('\n')[0]})`);
    ctx.skip();
  }
  return () => {
    try {
      execFileSync('umount', [mnt], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', mnt], { stdio: 'pipe' });
    }
  };
}

describe('persistence: a failed write', function () {
  this.timeout(30000);
  const dir = tempDir();
  const mnt = join(dir, 'mnt');
  const logfile = join(mnt, 'logfile');
  const filler = join(mnt, 'filler');
  let unmount: (() => void) | null = null;
  let daemon: Daemon | undefined;

  beforeEach(function () {
    unmount = mountTmpfs(this, mnt);
  });
  afterEach(async () => {
    await daemon?.kill();
    daemon = undefined;
    unmount?.();
    unmount = null;
    rmSync(mnt, { recursive: true, force: true });
  });

  it('answers ERROR internal, leaves memory unchanged, and works again once space is freed', async () => {
    const start = () => Daemon.start({ dir, config: { database: { persistence: 'logfile', logfile_path: logfile } } });
    daemon = await start();
    const c = await LineClient.connect(daemon.tcp);
    const longId = `full.${'j'.repeat(1019)}`; // 1024 bytes: each SET record is 1040 bytes
    const oldCommand = `echo ${'o'.repeat(3800)}`;
    const newCommand = `echo ${'n'.repeat(3800)}`;
    await ok(c, `SET ${longId} ${FAR_FUTURE_NS}`);
    await ok(c, `RULE SET pad pad. shell "${oldCommand}"`);
    const jobsBefore = (await stat(c)).get('jobs_total');

    fillUp(filler);
    // The last page of the logfile may still hold a few records: write until one fails.
    let acknowledged = FAR_FUTURE_NS;
    let failed: string[] = [];
    for (let i = 1n; i <= 10n && failed.length === 0; i++) {
      const lines = await c.request('w', `SET ${longId} ${FAR_FUTURE_NS + i}`);
      if (lines[0] === 'w OK') acknowledged = FAR_FUTURE_NS + i;
      else failed = lines;
    }
    expect(failed).to.deep.equal(['w ERROR internal']);
    expect(await getJob(c, longId)).to.equal(`planned ${acknowledged}`);

    expect(await c.request('r', `RULE SET pad pad. shell "${newCommand}"`)).to.deep.equal(['r ERROR internal']);
    expect(await listLines(c, 'LISTRULES')).to.deep.equal([`pad pad. shell "${oldCommand}"`]);
    // a pipelined batch of new jobs fails as a whole and leaves nothing behind
    c.write(['a', 'b', 'c'].map((x) => `b${x} SET full.new.${x}.${'k'.repeat(1000)} ${FAR_FUTURE_NS}\n`).join(''));
    for (const x of ['a', 'b', 'c']) expect(await c.collect(`b${x}`)).to.deep.equal([`b${x} ERROR internal`]);
    expect(await listLines(c, 'QUERY full.new.')).to.deep.equal([]);
    expect((await stat(c)).get('jobs_total')).to.equal(jobsBefore);
    expect(logRecords(daemon, 'persisting failed; unacknowledged changes rolled back').length).to.be.greaterThan(0);

    rmSync(filler);
    await ok(c, `SET ${longId} ${FAR_FUTURE_NS + 100n}`);
    await ok(c, `RULE SET pad pad. shell "${newCommand}"`);
    expect(await getJob(c, longId)).to.equal(`planned ${FAR_FUTURE_NS + 100n}`);
    c.close();

    // What is on disk is exactly what was acknowledged: no stray bytes of the failed writes.
    expect((await daemon.stop()).code).to.equal(0);
    daemon = await start();
    expect(logRecords(daemon, 'logfile ends with an incomplete record (a torn write); cutting it off')).to.have.length(0);
    const c2 = await LineClient.connect(daemon.tcp);
    expect(await getJob(c2, longId)).to.equal(`planned ${FAR_FUTURE_NS + 100n}`);
    expect(await listLines(c2, 'LISTRULES')).to.deep.equal([`pad pad. shell "${newCommand}"`]);
    expect(await listLines(c2, 'QUERY')).to.deep.equal([`${longId} planned ${FAR_FUTURE_NS + 100n}`]);
    c2.close();
  });
});

describe('persistence: a compaction that runs out of space', function () {
  this.timeout(30000);
  const dir = tempDir();
  const mnt = join(dir, 'mnt');
  const logfile = join(mnt, 'logfile');
  let unmount: (() => void) | null = null;
  let daemon: Daemon | undefined;

  before(function () {
    unmount = mountTmpfs(this, mnt);
  });
  after(async () => {
    await daemon?.kill();
    unmount?.();
  });

  it('leaves no partial output behind: writes keep working, and the fold succeeds once space is back', async () => {
    // compression_interval 0: the only cycle is the fold of the leftover at startup
    const start = () => Daemon.start({ dir, config: { database: { persistence: 'logfile', logfile_path: logfile, compression_interval: 0 } } });
    daemon = await start();
    let c = await LineClient.connect(daemon.tcp);
    // 2000 distinct jobs: about 110 KB that compaction cannot shrink
    c.write(Array.from({ length: 2000 }, (_, i) => `p${i} SET nospace.${String(i).padStart(30, '0')} ${FAR_FUTURE_NS + BigInt(i)}\n`).join(''));
    const replies = await c.collect('p1999', 20000);
    expect(replies.filter((l) => !/^p\d+ OK$/.test(l))).to.deep.equal([]);
    expect(replies).to.have.length(2000);
    c.close();
    const state = await snapshot(daemon.tcp);
    expect(state.jobs).to.have.length(2000);
    expect((await daemon.stop()).code).to.equal(0);

    // An interrupted compaction, on a disk with 40 KiB left: its fold cannot fit.
    renameSync(logfile, `${logfile}.to_compress`);
    const filler = join(mnt, 'filler');
    truncateSync(filler, fillUp(filler) - 40 * 1024);
    daemon = await start();
    c = await LineClient.connect(daemon.tcp);
    await waitFor(async () => (await stat(c)).get('compression') === 'failure', 10000, 'the fold to fail');
    expect(existsSync(`${logfile}.compacting`)).to.equal(false);
    await ok(c, `SET nospace.after ${FAR_FUTURE_NS}`);
    c.close();
    const withNew = await snapshot(daemon.tcp);
    expect(withNew.jobs).to.have.length(2001);
    expect((await daemon.stop()).code).to.equal(0);

    rmSync(filler);
    daemon = await start();
    c = await LineClient.connect(daemon.tcp);
    await waitFor(async () => (await stat(c)).get('compression') === 'success', 10000, 'the fold to succeed');
    c.close();
    expect(existsSync(`${logfile}.to_compress`)).to.equal(false);
    expect(await snapshot(daemon.tcp)).to.deep.equal(withNew);
  });
});
