// Group commit, failure handling and file switching of the journal, through a fake file whose
// writes and fsyncs the test releases by hand (and one real file for the on-disk path).
import { expect } from 'chai';
import { constants, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../../lib/log.ts';
import { encodeRecord, RecordEncodeError } from '../../../lib/logfile/codec.ts';
import { forEachFrame } from '../../../lib/logfile/frames.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { appendFileOpener, FileJournal, JournalClosedError, JournalWriteError } from '../../../lib/logfile/writer.ts';
import type { JournalFile, OpenJournalFile } from '../../../lib/logfile/writer.ts';
import { tempDir } from '../../helpers/tmp.ts';

const job = (id: string, execution = 1n): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });

interface Gate { wait: Promise<void>; open(): void }
function gate(): Gate {
  let open!: () => void;
  const wait = new Promise<void>((r) => { open = r; });
  return { wait, open };
}

/** An in-memory file; `holdSync`/`failWrite`/... let a test stop or break the next call. */
class FakeFile implements JournalFile {
  data = Buffer.alloc(0);
  writeCalls = 0;
  syncCalls = 0;
  truncations: number[] = [];
  closed = false;
  holdSync: Gate | null = null;
  failWrite: { after: number } | null = null; // write `after` bytes, then fail
  failSync = false;
  failTruncate = 0; // how many truncations fail
  async writev(buffers: Buffer[]): Promise<number> {
    this.writeCalls++;
    const all = Buffer.concat(buffers);
    if (this.failWrite !== null) {
      const part = all.subarray(0, this.failWrite.after);
      this.failWrite = null;
      this.data = Buffer.concat([this.data, part]);
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    }
    this.data = Buffer.concat([this.data, all]);
    return all.length;
  }
  async sync(): Promise<void> {
    this.syncCalls++;
    const held = this.holdSync;
    this.holdSync = null;
    if (held !== null) await held.wait;
    if (this.failSync) { this.failSync = false; throw new Error('EIO: fsync failed'); }
  }
  async truncate(length: number): Promise<void> {
    if (this.failTruncate > 0) { this.failTruncate--; throw new Error('EIO: truncate failed'); }
    this.truncations.push(length);
    this.data = this.data.subarray(0, length);
  }
  async close(): Promise<void> { this.closed = true; }
}

async function fakeJournal(fsync = true): Promise<{ journal: FileJournal; file: FakeFile }> {
  const file = new FakeFile();
  const journal = await FileJournal.open({ path: '/fake/log', fsync, log: silentLogger(), openFile: async () => ({ file, size: 0 }) });
  return { journal, file };
}

function recordsIn(buf: Buffer): LogRecord[] {
  const records: LogRecord[] = [];
  if (forEachFrame(buf, 0, (r) => records.push(r)) !== buf.length) throw new Error('torn');
  return records;
}

/** Lets the journal run until `check` holds (bounded number of event-loop turns). */
async function turnsUntil(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).to.equal(true);
}

const settled = <T>(p: Promise<T>) => p.then(() => 'resolved', (e: Error) => e);

describe('logfile/writer', () => {
  it('coalesces every flush made during an in-flight fsync into ONE further write and fsync', async () => {
    const { journal, file } = await fakeJournal();
    const hold = gate();
    file.holdSync = hold;
    journal.append(job('first'));
    const first = journal.flush();
    await turnsUntil(() => file.syncCalls === 1); // round 1 is now waiting on its fsync
    const later: Promise<void>[] = [];
    for (let i = 0; i < 64; i++) {
      journal.append(job(`c${i}`));
      later.push(journal.flush());
    }
    await new Promise((r) => setImmediate(r));
    expect([file.writeCalls, file.syncCalls]).to.deep.equal([1, 1]);
    hold.open();
    await first;
    await Promise.all(later);
    expect([file.writeCalls, file.syncCalls, journal.rounds]).to.deep.equal([2, 2, 2]);
    expect(recordsIn(file.data)).to.deep.equal([job('first'), ...Array.from({ length: 64 }, (_, i) => job(`c${i}`))]);
    expect(journal.durableBytes).to.equal(file.data.length);
  });

  it('a flush with nothing new waits for the round in flight; with nothing at all it resolves at once', async () => {
    const { journal, file } = await fakeJournal();
    await journal.flush();
    expect(file.writeCalls).to.equal(0);
    const hold = gate();
    file.holdSync = hold;
    journal.append(job('a'));
    const p1 = journal.flush();
    let done = false;
    const p2 = journal.flush().then(() => { done = true; });
    await new Promise((r) => setImmediate(r));
    expect(done).to.equal(false);
    hold.open();
    await Promise.all([p1, p2]);
    expect(file.writeCalls).to.equal(1);
  });

  it('does not fsync when fsync_on_persist is off', async () => {
    const { journal, file } = await fakeJournal(false);
    journal.append(job('a'));
    await journal.flush();
    expect([file.writeCalls, file.syncCalls]).to.deep.equal([1, 0]);
  });

  it('a failed write cuts the file back, rejects that round and everything after it, and stays usable', async () => {
    const { journal, file } = await fakeJournal();
    journal.append(job('durable'));
    await journal.flush();
    const durable = file.data.length;

    const hold = gate();
    file.holdSync = hold; // round 2 is a success in flight...
    journal.append(job('r2'));
    const r2 = journal.flush();
    await turnsUntil(() => file.syncCalls === 2);
    file.failWrite = { after: 5 }; // ...round 3 will write 5 bytes then fail
    journal.append(job('r3'));
    const r3 = settled(journal.flush());
    hold.open();
    await r2;
    const afterR2 = durable + encodeRecord(job('r2')).length;
    // appended while round 3 is failing: discarded with it
    journal.append(job('during'));
    const during = settled(journal.flush());
    const [e3, eDuring] = await Promise.all([r3, during]);
    expect(e3).to.be.instanceOf(JournalWriteError).and.match(/ENOSPC/);
    expect(eDuring).to.equal(e3);
    expect(file.truncations).to.deep.equal([afterR2]);
    expect(afterR2).to.be.above(durable);
    expect(journal.durableBytes).to.equal(afterR2);

    journal.append(job('after'));
    await journal.flush();
    expect(recordsIn(file.data)).to.deep.equal([job('durable'), job('r2'), job('after')]);
  });

  it('a failed fsync is handled like a failed write', async () => {
    const { journal, file } = await fakeJournal();
    file.failSync = true;
    journal.append(job('lost'));
    expect(await settled(journal.flush())).to.be.instanceOf(JournalWriteError).and.match(/EIO/);
    expect(file.data.length).to.equal(0);
    journal.append(job('kept'));
    await journal.flush();
    expect(recordsIn(file.data)).to.deep.equal([job('kept')]);
  });

  it('if cutting back fails too, the next round cuts back first and never writes after stale bytes', async () => {
    const { journal, file } = await fakeJournal();
    file.failWrite = { after: 7 };
    file.failTruncate = 2;
    journal.append(job('x'));
    expect(await settled(journal.flush())).to.be.instanceOf(JournalWriteError);
    expect(file.data.length).to.equal(7); // the cut back failed
    journal.append(job('y'));
    expect(await settled(journal.flush())).to.be.instanceOf(JournalWriteError).and.match(/truncate/);
    expect(file.writeCalls).to.equal(1); // nothing written after the stale bytes
    journal.append(job('z'));
    await journal.flush();
    expect(recordsIn(file.data)).to.deep.equal([job('z')]);
  });

  it('append() of a record that cannot be stored throws at once and leaves the pending records intact', async () => {
    const { journal, file } = await fakeJournal();
    journal.append(job('ok1'));
    expect(() => journal.append(job('x'.repeat(70000)))).to.throw(RecordEncodeError);
    journal.append(job('ok2'));
    await journal.flush();
    expect(recordsIn(file.data)).to.deep.equal([job('ok1'), job('ok2')]);
  });

  it('exclusive() waits for the round in flight, holds new rounds, and switchTo() moves appends to another file', async () => {
    const { journal, file } = await fakeJournal();
    const other = new FakeFile();
    const hold = gate();
    file.holdSync = hold;
    journal.append(job('old'));
    const p1 = journal.flush();
    await turnsUntil(() => file.syncCalls === 1);
    const order: string[] = [];
    const ex = journal.exclusive(async () => {
      order.push('exclusive');
      journal.append(job('queued'));
      const p = journal.flush().then(() => order.push('queued durable'));
      await new Promise((r) => setImmediate(r));
      expect(file.writeCalls).to.equal(1);
      await journal.switchTo({ file: other, size: 100 });
      return { p }; // not the promise itself: exclusive() would wait for it
    });
    await new Promise((r) => setImmediate(r));
    expect(order).to.deep.equal([]);
    hold.open();
    await p1;
    await (await ex).p;
    expect(order).to.deep.equal(['exclusive', 'queued durable']);
    expect(file.closed).to.equal(true);
    expect(recordsIn(other.data)).to.deep.equal([job('queued')]);
    expect(journal.durableBytes).to.equal(100 + other.data.length);
  });

  it('switchTo() outside exclusive() is refused', async () => {
    const { journal } = await fakeJournal();
    let error: unknown = null;
    await journal.switchTo({ file: new FakeFile(), size: 0 }).catch((e: unknown) => { error = e; });
    expect(error).to.match(/outside exclusive/);
  });

  it('close() writes what is pending; afterwards append throws and flush rejects', async () => {
    const { journal, file } = await fakeJournal();
    journal.append(job('last'));
    await journal.close();
    expect(recordsIn(file.data)).to.deep.equal([job('last')]);
    expect(file.closed).to.equal(true);
    expect(() => journal.append(job('late'))).to.throw(JournalClosedError);
    expect(await settled(journal.flush())).to.be.instanceOf(JournalClosedError);
  });

  it('on a real file: concurrent flushes share fsyncs, and a failing write is cut back on disk', async () => {
    const path = join(tempDir(), 'log');
    let breakNext = false;
    const opener: OpenJournalFile = async (p) => {
      const opened = await appendFileOpener(false)(p);
      const real = opened.file;
      return {
        size: opened.size,
        file: {
          ...real,
          writev: async (bufs) => {
            if (!breakNext) return real.writev(bufs);
            breakNext = false;
            await real.writev([Buffer.concat(bufs).subarray(0, 9)]); // a torn write really on disk
            throw new Error('EIO: injected');
          },
        },
      };
    };
    const journal = await FileJournal.open({ path, fsync: true, log: silentLogger(), openFile: opener });
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      journal.append(job(`j${i}`, BigInt(i)));
      flushes.push(journal.flush());
    }
    await Promise.all(flushes);
    expect(journal.rounds).to.be.at.most(2); // the first alone, then the other 199 together
    const good = readFileSync(path);
    expect(good.equals(Buffer.concat(Array.from({ length: 200 }, (_, i) => encodeRecord(job(`j${i}`, BigInt(i))))))).to.equal(true);

    breakNext = true;
    journal.append(job('broken'));
    expect(await settled(journal.flush())).to.be.instanceOf(JournalWriteError);
    expect(readFileSync(path).length).to.equal(good.length);
    journal.append(job('fine'));
    await journal.flush();
    await journal.close();
    expect(recordsIn(readFileSync(path)).at(-1)).to.deep.equal(job('fine'));
    expect(recordsIn(readFileSync(path))).to.have.length(201);
  });

});

describe('logfile/writer on real files', () => {
  /** The open-file flags of this process's descriptors on `path` (Linux /proc). */
  function flagsOf(path: string): number[] {
    const out: number[] = [];
    for (const fd of readdirSync('/proc/self/fd')) {
      let target = '';
      try { target = readlinkSync(`/proc/self/fd/${fd}`); } catch { continue; }
      if (target !== path) continue;
      const line = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').find((l) => l.startsWith('flags:'))!;
      out.push(parseInt(line.split(/\s+/)[1]!, 8));
    }
    return out;
  }

  it('with fsync_on_persist the logfile is opened O_DSYNC: every round is durable when its write returns', async function () {
    if (process.platform !== 'linux') this.skip();
    for (const fsync of [true, false]) {
      const path = join(tempDir(), 'log');
      const journal = await FileJournal.open({ path, fsync, log: silentLogger() });
      try {
        journal.append(job('a'));
        await journal.flush();
        const flags = flagsOf(path);
        expect(flags).to.have.length(1);
        expect((flags[0]! & constants.O_DSYNC) !== 0, `fsync ${fsync}`).to.equal(fsync);
        expect(recordsIn(readFileSync(path))).to.deep.equal([job('a')]);
      } finally {
        await journal.close();
      }
    }
  });
});
