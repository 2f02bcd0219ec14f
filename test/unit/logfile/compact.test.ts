// Compaction: shrinks a log of overwrites to the same state, keeps appends made meanwhile,
// folds a leftover first, and every crash point (files left as after each step) replays to
// the acknowledged state.
import { expect } from 'chai';
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../../lib/log.ts';
import { encodeRecord } from '../../../lib/logfile/codec.ts';
import { isRemoval, recordKey } from '../../../lib/logfile/frames.ts';
import { Compactor } from '../../../lib/logfile/compact.ts';
import { formatJson } from '../../../lib/logfile/dump-format.ts';
import { foldLogfile } from '../../../lib/logfile/fold.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { replayStartup } from '../../../lib/logfile/replay.ts';
import { FileJournal } from '../../../lib/logfile/writer.ts';
import type { FoldRunner } from '../../../lib/logfile/folds.ts';
import { inProcessFolds } from '../../helpers/folds.ts';
import { tempDir } from '../../helpers/tmp.ts';

const job = (id: string, execution: bigint, status: 'planned' | 'executed' = 'planned'): LogRecord => ({ t: 'job', job: { id, execution, status } });
const rule = (id: string, command: string): LogRecord => ({ t: 'rule', rule: { id, pattern: id, runner: { type: 'shell', command } } });


/** The state a sequence of records leaves: key -> canonical JSON of the last value. */
function stateOf(records: Iterable<LogRecord>): Map<string, string> {
  const state = new Map<string, string>();
  for (const r of records) {
    if (isRemoval(r)) state.delete(recordKey(r));
    else state.set(recordKey(r), formatJson(r));
  }
  return new Map([...state].sort(([a], [b]) => (a < b ? -1 : 1)));
}

async function stateOnDisk(path: string): Promise<Map<string, string>> {
  const seen: LogRecord[] = [];
  await replayStartup(path, (r) => seen.push(r), silentLogger());
  return stateOf(seen);
}

/** Many overwrites, removals, and a job and a rule sharing an identifier. */
function history(): LogRecord[] {
  const out: LogRecord[] = [];
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < 300; i++) out.push(job(`app.j${i}`, BigInt(round * 1000 + i)));
  }
  for (let i = 0; i < 300; i += 3) out.push({ t: 'job.removed', id: `app.j${i}` });
  out.push(rule('same', 'echo 1'), job('same', 7n, 'executed'), rule('same', 'echo 2'));
  out.push(rule('gone', 'x'), { t: 'rule.removed', id: 'gone' });
  out.push(job('app.j3', 99n)); // removed, then re-created
  return out;
}

async function openJournal(path: string): Promise<FileJournal> {
  return FileJournal.open({ path, fsync: true, log: silentLogger() });
}

async function write(journal: FileJournal, records: LogRecord[]): Promise<void> {
  for (const r of records) journal.append(r);
  await journal.flush();
}

function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => { open = r; });
  return { wait, open };
}

describe('logfile/compact', () => {
  it('shrinks a log of overwrites to the same state, in a child process', async () => {
    const path = join(tempDir(), 'log');
    const journal = await openJournal(path);
    const records = history();
    await write(journal, records);
    const before = statSync(path).size;
    const compactor = new Compactor({ path, journal, intervalSec: 0, log: silentLogger(), folds: inProcessFolds() });
    expect(compactor.state).to.equal('idle');
    expect(await compactor.runOnce()).to.equal('success');
    expect([compactor.state, compactor.compactions]).to.deep.equal(['success', 1]);
    expect(statSync(path).size).to.be.below(before / 5);
    expect(existsSync(`${path}.to_compress`) || existsSync(`${path}.compacting`)).to.equal(false);
    expect(await stateOnDisk(path)).to.deep.equal(stateOf(records));
    // the journal writes to the compacted file now
    await write(journal, [job('after', 1n)]);
    await compactor.stop();
    await journal.close();
    expect(await stateOnDisk(path)).to.deep.equal(stateOf([...records, job('after', 1n)]));
  });

  it('keeps everything appended while it runs, including during the final swap', async () => {
    const path = join(tempDir(), 'log');
    const journal = await openJournal(path);
    const records = history();
    await write(journal, records);
    const folding = gate();
    const release = gate();
    const folds = inProcessFolds((real) => (src, dst) => {
      const run = real(src, dst);
      return { result: (async () => { folding.open(); await release.wait; return run.result; })(), cancel: run.cancel };
    });
    const compactor = new Compactor({ path, journal, intervalSec: 0, log: silentLogger(), folds });
    const outcome = compactor.runOnce();
    await folding.wait;
    expect(compactor.state).to.equal('running');
    expect(await compactor.runOnce()).to.equal('skipped');
    const meanwhile: LogRecord[] = [];
    for (let i = 0; i < 50; i++) meanwhile.push(job(`app.j${i}`, 5000n + BigInt(i)), { t: 'job.removed', id: `app.j${i + 100}` });
    await write(journal, meanwhile.slice(0, 40));
    release.open();
    // flushes racing the swap: they queue behind it and land in the new file
    const racing = meanwhile.slice(40).map((r) => { journal.append(r); return journal.flush(); });
    expect(await outcome).to.equal('success');
    await Promise.all(racing);
    const tail = [rule('late', 'echo late')];
    await write(journal, tail);
    await compactor.stop();
    await journal.close();
    expect(await stateOnDisk(path)).to.deep.equal(stateOf([...records, ...meanwhile, ...tail]));
  });

  it('start() folds a leftover .to_compress before anything else', async () => {
    const path = join(tempDir(), 'log');
    const old = history();
    writeFileSync(`${path}.to_compress`, Buffer.concat(old.map(encodeRecord)));
    const fresh = [job('fresh', 1n)];
    writeFileSync(path, Buffer.concat(fresh.map(encodeRecord)));
    const journal = await openJournal(path);
    let cycled!: (outcome: string) => void;
    const done = new Promise<string>((resolve) => { cycled = resolve; });
    const compactor = new Compactor({ path, journal, intervalSec: 3600, log: silentLogger(), onCycle: cycled, folds: inProcessFolds() });
    compactor.start();
    expect(await done).to.equal('success');
    await compactor.stop();
    expect(existsSync(`${path}.to_compress`)).to.equal(false);
    await journal.close();
    expect(await stateOnDisk(path)).to.deep.equal(stateOf([...old, ...fresh]));
  });

  it('a failed fold is reported, keeps all data, and the next cycle folds the leftover', async () => {
    const path = join(tempDir(), 'log');
    const journal = await openJournal(path);
    const records = history();
    await write(journal, records);
    let failNext = true;
    const folds = inProcessFolds((real) => (src, dst) => {
      if (!failNext) return real(src, dst);
      failNext = false;
      return { result: Promise.reject(new Error('injected')), cancel() {} };
    });
    const compactor = new Compactor({ path, journal, intervalSec: 0, log: silentLogger(), folds });
    expect(await compactor.runOnce()).to.equal('failure');
    expect(compactor.state).to.equal('failure');
    expect(existsSync(`${path}.to_compress`)).to.equal(true);
    await write(journal, [job('between', 3n)]);
    expect(await stateOnDisk(path)).to.deep.equal(stateOf([...records, job('between', 3n)]));
    expect(await compactor.runOnce()).to.equal('success');
    expect(existsSync(`${path}.to_compress`)).to.equal(false);
    await compactor.stop();
    await journal.close();
    expect(await stateOnDisk(path)).to.deep.equal(stateOf([...records, job('between', 3n)]));
  });

  it('stop() abandons a running fold; the leftover keeps every record', async () => {
    const path = join(tempDir(), 'log');
    const journal = await openJournal(path);
    await write(journal, history());
    const folding = gate();
    const fold: FoldRunner = (src, dst) => {
      let cancel!: () => void;
      const result = new Promise<never>((_, reject) => { cancel = () => reject(new Error('cancelled')); });
      void src; void dst;
      folding.open();
      return { result, cancel };
    };
    const compactor = new Compactor({ path, journal, intervalSec: 0, log: silentLogger(), folds: { run: fold, close: async () => {} } });
    const outcome = compactor.runOnce();
    await folding.wait;
    await compactor.stop();
    expect(await outcome).to.equal('failure');
    expect(await compactor.runOnce()).to.equal('skipped');
    await journal.close();
    expect(await stateOnDisk(path)).to.deep.equal(stateOf(history()));
  });

  it('the fold writes exactly the last frame of each entry, in order of last write, frames over 1 MiB included', async () => {
    const dir = tempDir();
    const src = join(dir, 'src');
    const big = (tag: string): LogRecord => ({ t: 'rule', rule: { id: `big${tag}`, pattern: 'b.', runner: { type: 'direct', executable: '/bin/true', args: Array.from({ length: 24 }, (_, i) => `${tag}${i}`.padEnd(60_000, tag)) } } });
    const records: LogRecord[] = [];
    for (let i = 0; i < 40_000; i++) records.push(job(`w.${i % 9000}`, BigInt(i))); // frames across 1 MiB read chunks
    records.push(big('a'), job('w.5', 5n), big('b'), big('a'), { t: 'job.removed', id: 'w.7' });
    writeFileSync(src, Buffer.concat(records.map(encodeRecord)));
    const result = await foldLogfile(src, join(dir, 'dst'));
    const last = new Map<string, LogRecord>();
    for (const r of records) {
      last.delete(recordKey(r));
      if (!isRemoval(r)) last.set(recordKey(r), r);
    }
    expect(readFileSync(join(dir, 'dst')).equals(Buffer.concat([...last.values()].map(encodeRecord)))).to.equal(true);
    expect(result).to.include({ inputRecords: records.length, outputRecords: last.size, tornBytes: 0 });
    expect(encodeRecord(big('a')).length).to.be.above(1 << 20);
  });

  it('the fold keeps the highest format mark seen, once, at the head; no mark in, none out', async () => {
    const dir = tempDir();
    const mark: LogRecord = { t: 'format', version: 2 };
    const marked = [job('a', 1n), mark, job('b', 2n), mark, job('a', 3n), { t: 'job.removed', id: 'b' } as LogRecord];
    writeFileSync(join(dir, 'marked'), Buffer.concat(marked.map(encodeRecord)));
    const result = await foldLogfile(join(dir, 'marked'), join(dir, 'marked.out'));
    expect(readFileSync(join(dir, 'marked.out')).equals(Buffer.concat([mark, job('a', 3n)].map(encodeRecord)))).to.equal(true);
    expect(result).to.include({ inputRecords: 6, outputRecords: 2, outputBytes: 7 + encodeRecord(job('a', 3n)).length });
    // folding the output again changes nothing
    await foldLogfile(join(dir, 'marked.out'), join(dir, 'twice'));
    expect(readFileSync(join(dir, 'twice')).equals(readFileSync(join(dir, 'marked.out')))).to.equal(true);

    writeFileSync(join(dir, 'plain'), Buffer.concat([job('a', 1n), job('a', 2n)].map(encodeRecord)));
    await foldLogfile(join(dir, 'plain'), join(dir, 'plain.out'));
    expect(readFileSync(join(dir, 'plain.out')).equals(encodeRecord(job('a', 2n)))).to.equal(true);
  });

  it('an empty log is a quick success that touches nothing', async () => {
    const path = join(tempDir(), 'log');
    const journal = await openJournal(path);
    const compactor = new Compactor({ path, journal, intervalSec: 0, log: silentLogger(), folds: inProcessFolds() });
    expect(await compactor.runOnce()).to.equal('success');
    expect(existsSync(`${path}.to_compress`)).to.equal(false);
    await compactor.stop();
    await journal.close();
  });

  it('skips a cycle while the log is still exactly the last fold output, and folds again after an append', async () => {
    const path = join(tempDir(), 'log');
    const journal = await openJournal(path);
    const records = history();
    await write(journal, records);
    let runs = 0;
    let during: LogRecord[] = [];
    const folds = inProcessFolds((real) => (src, dst) => {
      runs++;
      const run = real(src, dst);
      // appended while the fold runs: they land in the compacted file's tail
      return { result: run.result.then(async (r) => { await write(journal, during); return r; }), cancel: run.cancel };
    });
    const compactor = new Compactor({ path, journal, intervalSec: 0, log: silentLogger(), folds });
    during = [job('tail', 1n)];
    expect(await compactor.runOnce()).to.equal('success');
    // the log ends with a tail appended during the cycle: the next cycle folds it in
    during = [];
    expect(await compactor.runOnce()).to.equal('success');
    expect([runs, compactor.compactions]).to.deep.equal([2, 2]);
    const { ino, size } = statSync(path);
    expect(await compactor.runOnce()).to.equal('success');
    expect([runs, compactor.compactions, compactor.state]).to.deep.equal([2, 2, 'success']);
    expect(statSync(path)).to.include({ ino, size }); // the same file, untouched
    await write(journal, [job('later', 2n)]);
    expect(await compactor.runOnce()).to.equal('success');
    expect([runs, compactor.compactions]).to.deep.equal([3, 3]);
    await compactor.stop();
    await journal.close();
    expect(await stateOnDisk(path)).to.deep.equal(stateOf([...records, job('tail', 1n), job('later', 2n)]));
  });

  describe('crash points: files as a crash after each step leaves them, then a restart', () => {
    const old = history();
    const fresh = [job('app.j1', 777n), { t: 'job.removed', id: 'app.j2' } as LogRecord, rule('same', 'echo 3')];
    const expected = stateOf([...old, ...fresh]);
    const bytesOf = (rs: LogRecord[]) => Buffer.concat(rs.map(encodeRecord));

    async function compacted(dir: string): Promise<Buffer> {
      const src = join(dir, 'src');
      writeFileSync(src, bytesOf(old));
      await foldLogfile(src, join(dir, 'folded'));
      return readFileSync(join(dir, 'folded'));
    }

    it('after the rename to .to_compress, before the fresh log exists', async () => {
      const path = join(tempDir(), 'log');
      writeFileSync(`${path}.to_compress`, bytesOf(old));
      expect(await stateOnDisk(path)).to.deep.equal(stateOf(old));
    });

    it('after the rotation, with appends in the fresh log', async () => {
      const path = join(tempDir(), 'log');
      writeFileSync(`${path}.to_compress`, bytesOf(old));
      writeFileSync(path, bytesOf(fresh));
      expect(await stateOnDisk(path)).to.deep.equal(expected);
    });

    it('while the output is half written (the output is discarded)', async () => {
      const dir = tempDir();
      const path = join(dir, 'log');
      writeFileSync(`${path}.to_compress`, bytesOf(old));
      writeFileSync(path, bytesOf(fresh));
      writeFileSync(`${path}.compacting`, (await compacted(dir)).subarray(0, 1001));
      expect(await stateOnDisk(path)).to.deep.equal(expected);
      expect(existsSync(`${path}.compacting`)).to.equal(false);
    });

    it('after the output replaced the log, before .to_compress is unlinked', async () => {
      const dir = tempDir();
      const path = join(dir, 'log');
      writeFileSync(`${path}.to_compress`, bytesOf(old));
      writeFileSync(path, Buffer.concat([await compacted(dir), bytesOf(fresh)]));
      expect(await stateOnDisk(path)).to.deep.equal(expected);
    });

    it('after the unlink (the finished state)', async () => {
      const dir = tempDir();
      const path = join(dir, 'log');
      writeFileSync(path, Buffer.concat([await compacted(dir), bytesOf(fresh)]));
      expect(await stateOnDisk(path)).to.deep.equal(expected);
    });

    it('a restart after a crash before the unlink, then a cycle, still gives the same state', async () => {
      const dir = tempDir();
      const path = join(dir, 'log');
      writeFileSync(`${path}.to_compress`, bytesOf(old));
      writeFileSync(path, Buffer.concat([await compacted(dir), bytesOf(fresh)]));
      copyFileSync(path, join(dir, 'copy'));
      const journal = await openJournal(path);
      const compactor = new Compactor({ path, journal, intervalSec: 0, log: silentLogger(), folds: inProcessFolds() });
      expect(await compactor.runOnce()).to.equal('success');
      await compactor.stop();
      await journal.close();
      expect(await stateOnDisk(path)).to.deep.equal(expected);
    });
  });
});
