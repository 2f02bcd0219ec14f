// Startup replay: the hand-built ztick fixture loads unchanged; torn tails are cut off with a
// warning; a corrupt complete frame stops with the file and byte offset, a newer tickd's record
// with its format, and neither touches the file; `.to_compress` first.
import { expect } from 'chai';
import bunyan from 'bunyan';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../../lib/log.ts';
import type { Logger } from '../../../lib/log.ts';
import { encodeRecord } from '../../../lib/logfile/codec.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { LogfileCorruptError, LogfileTooNewError, LogfileUnreadableError, replayLogfile, replayStartup } from '../../../lib/logfile/replay.ts';
import { tempDir } from '../../helpers/tmp.ts';

const FIXTURE = new URL('../../fixtures/logfile/ztick-v1.log', import.meta.url);
const TS = 1605457800000000000n;

const FIXTURE_RECORDS: LogRecord[] = [
  { t: 'job', job: { id: 'toto', execution: TS, status: 'planned' } },
  { t: 'rule', rule: { id: 't', pattern: 'toto', runner: { type: 'shell', command: 'titi' } } },
  { t: 'rule', rule: { id: 'ta', pattern: 'tot', runner: { type: 'amqp', dsn: 'amqp://guest:guest@localhost:5672/', exchange: '', routing_key: 'jobs' } } },
  { t: 'job', job: { id: 'tatat', execution: TS, status: 'executed' } },
  { t: 'job', job: { id: 'toto', execution: TS + 1n, status: 'triggered' } },
  { t: 'rule', rule: { id: 'h', pattern: 'app.hook.', runner: { type: 'http', method: 'POST', url: 'https://hooks.example.com/x' } } },
  { t: 'rule', rule: { id: 'd', pattern: 'app.', runner: { type: 'direct', executable: '/bin/echo', args: ['hello world', ''] } } },
  { t: 'rule', rule: { id: 'w', pattern: 'app.wf.', runner: { type: 'awf', workflow: 'report', inputs: ['format=pdf'] } } },
  { t: 'rule', rule: { id: 'r', pattern: 'app.redis.', runner: { type: 'redis', url: 'redis://localhost:6379/0', command: 'RPUSH', key: 'queue' } } },
  { t: 'job.removed', id: 'tatat' },
  { t: 'rule.removed', id: 'ta' },
  { t: 'job', job: { id: 'neg', execution: -1n, status: 'failed' } },
];

function capturingLogger(): { log: Logger; records: () => { level: number; msg: string; offset?: number; bytes?: number }[] } {
  const ring = new bunyan.RingBuffer({ limit: 100 });
  const log = bunyan.createLogger({ name: 'test', streams: [{ type: 'raw', stream: ring, level: 'trace' }] });
  return { log, records: () => ring.records as { level: number; msg: string; offset?: number; bytes?: number }[] };
}

async function replayAll(path: string, log: Logger = silentLogger()) {
  const seen: LogRecord[] = [];
  const result = await replayLogfile(path, (r) => seen.push(r), log);
  return { seen, result };
}

function copyOfFixture(extra: Buffer = Buffer.alloc(0)): string {
  const path = join(tempDir(), 'logfile');
  copyFileSync(FIXTURE, path);
  if (extra.length > 0) writeFileSync(path, extra, { flag: 'a' });
  return path;
}

describe('logfile/replay', () => {
  it('loads the hand-built ztick logfile unchanged, record for record', async () => {
    const path = copyOfFixture();
    const { seen, result } = await replayAll(path);
    expect(seen).to.deep.equal(FIXTURE_RECORDS);
    expect(result).to.deep.equal({ records: 12, tornBytes: 0 });
    expect(readFileSync(path).equals(readFileSync(FIXTURE))).to.equal(true);
  });

  it('writes exactly the fixture bytes for the same records (ztick compatibility both ways)', () => {
    expect(Buffer.concat(FIXTURE_RECORDS.map(encodeRecord)).equals(readFileSync(FIXTURE))).to.equal(true);
  });

  it('treats a missing file as empty', async () => {
    const { seen, result } = await replayAll(join(tempDir(), 'absent'));
    expect(seen).to.deep.equal([]);
    expect(result).to.deep.equal({ records: 0, tornBytes: 0 });
  });

  it('cuts off a torn final frame and warns', async () => {
    const torn = encodeRecord({ t: 'job', job: { id: 'half', execution: 5n, status: 'planned' } }).subarray(0, 9);
    const path = copyOfFixture(torn);
    const { log, records } = capturingLogger();
    const { seen, result } = await replayAll(path, log);
    expect(seen).to.deep.equal(FIXTURE_RECORDS);
    expect(result).to.deep.equal({ records: 12, tornBytes: 9 });
    expect(readFileSync(path).length).to.equal(380);
    const warning = records().find((r) => r.level === bunyan.WARN);
    expect(warning).to.include({ offset: 380, bytes: 9 });
    expect(warning!.msg).to.match(/torn write/);
  });

  it('cuts off a tail of zero bytes (a crash-extended file) like a torn frame', async () => {
    const path = copyOfFixture(Buffer.alloc(4096));
    const { seen, result } = await replayAll(path);
    expect(seen).to.have.length(12);
    expect(result.tornBytes).to.equal(4096);
    expect(readFileSync(path).length).to.equal(380);
  });

  it('stops at a corrupt complete frame with the file and byte offset, leaving the file alone', async () => {
    const path = copyOfFixture();
    const bytes = readFileSync(path);
    // the type byte of the record at offset 121, and what is now its `needs`: format 2, which
    // this tickd reads, so the unknown type is damage (not a newer tickd's record)
    bytes[121 + 4] = 9;
    bytes[121 + 5] = 0;
    bytes[121 + 6] = 2;
    writeFileSync(path, bytes);
    let error: unknown = null;
    const seen: LogRecord[] = [];
    await replayLogfile(path, (r) => seen.push(r), silentLogger()).catch((e: unknown) => { error = e; });
    expect(error).to.be.instanceOf(LogfileCorruptError);
    expect((error as LogfileCorruptError).offset).to.equal(121);
    expect((error as Error).message).to.equal(`${path}: record at byte offset 121 does not decode: unknown record type byte 9 (byte offset 125)`);
    expect(seen).to.have.length(4);
    expect(readFileSync(path).equals(bytes)).to.equal(true);
  });

  it('stops at a newer tickd\'s record with its format and offset; nothing is cut, not even a torn tail after it', async () => {
    // type 0x10, needs format 7, and a body this tickd cannot know; then half a frame
    const newer = Buffer.from([0, 0, 0, 6, 0x10, 0, 7, 0xde, 0xad, 0xbe]);
    const path = copyOfFixture(Buffer.concat([newer, Buffer.from([0, 0, 0, 9, 0])]));
    const before = readFileSync(path);
    let error: unknown = null;
    const seen: LogRecord[] = [];
    await replayLogfile(path, (r) => seen.push(r), silentLogger()).catch((e: unknown) => { error = e; });
    expect(error).to.be.instanceOf(LogfileTooNewError);
    expect(error).to.be.instanceOf(LogfileUnreadableError);
    expect(error).to.not.be.instanceOf(LogfileCorruptError);
    expect(error).to.include({ offset: 380, needs: 7 });
    expect((error as Error).message).to.equal(`${path}: a record of tickd format 7 at byte offset 380; this tickd reads format 6 and older: upgrade tickd to read this log`);
    expect(seen).to.deep.equal(FIXTURE_RECORDS);
    expect(readFileSync(path).equals(before)).to.equal(true);
  });

  it('reads across chunk boundaries and frames larger than a chunk', async () => {
    const path = join(tempDir(), 'big');
    const small = (i: number): LogRecord => ({ t: 'job', job: { id: `app.job.${i}`, execution: BigInt(i) * 1_000_000_007n, status: 'planned' } });
    const huge: LogRecord = { t: 'rule', rule: { id: 'huge', pattern: '', runner: { type: 'direct', executable: 'x', args: new Array<string>(150).fill('z'.repeat(65535)) } } };
    const parts: Buffer[] = [];
    for (let i = 0; i < 150_000; i++) parts.push(encodeRecord(small(i)));
    parts.push(encodeRecord(huge));
    for (let i = 150_000; i < 300_000; i++) parts.push(encodeRecord(small(i)));
    writeFileSync(path, Buffer.concat(parts));
    let count = 0;
    let last: LogRecord | null = null;
    let hugeSeen = false;
    const result = await replayLogfile(path, (r) => {
      count++;
      last = r;
      if (r.t === 'rule') hugeSeen = r.rule.runner.type === 'direct' && r.rule.runner.args.length === 150;
    }, silentLogger());
    expect(result).to.deep.equal({ records: 300_001, tornBytes: 0 });
    expect([count, hugeSeen]).to.deep.equal([300_001, true]);
    expect(last).to.deep.equal(small(299_999));
  });

  describe('replayStartup', () => {
    it('replays a leftover .to_compress first, then the log, and removes a stale .compacting', async () => {
      const dir = tempDir();
      const path = join(dir, 'log');
      const a: LogRecord = { t: 'job', job: { id: 'a', execution: 1n, status: 'planned' } };
      const b: LogRecord = { t: 'job', job: { id: 'a', execution: 2n, status: 'planned' } };
      writeFileSync(`${path}.to_compress`, encodeRecord(a));
      writeFileSync(path, encodeRecord(b));
      writeFileSync(`${path}.compacting`, Buffer.from([0, 0, 0, 9, 1]));
      const seen: LogRecord[] = [];
      const result = await replayStartup(path, (r) => seen.push(r), silentLogger());
      expect(seen).to.deep.equal([a, b]);
      expect(result).to.deep.equal({ records: 2, tornBytes: 0, leftover: true });
      expect(existsSync(`${path}.compacting`)).to.equal(false);
    });

    it('refuses a newer tickd\'s record in a leftover .to_compress before the log is read', async () => {
      const dir = tempDir();
      const path = join(dir, 'log');
      const leftover = Buffer.concat([readFileSync(FIXTURE), Buffer.from([0, 0, 0, 3, 0x04, 0, 7])]); // a format mark of format 7
      writeFileSync(`${path}.to_compress`, leftover);
      copyFileSync(FIXTURE, path);
      const seen: LogRecord[] = [];
      const error = await replayStartup(path, (r) => seen.push(r), silentLogger()).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(LogfileTooNewError).and.include({ path: `${path}.to_compress`, offset: 380, needs: 7 });
      expect(seen).to.have.length(12);
      expect(readFileSync(`${path}.to_compress`).equals(leftover)).to.equal(true);
      expect(readFileSync(path).equals(readFileSync(FIXTURE))).to.equal(true);
    });

    it('without a leftover replays the log alone', async () => {
      const path = copyOfFixture();
      const seen: LogRecord[] = [];
      expect(await replayStartup(path, (r) => seen.push(r), silentLogger())).to.deep.equal({ records: 12, tornBytes: 0, leftover: false });
      expect(seen).to.deep.equal(FIXTURE_RECORDS);
    });

    it('with only a leftover (crash right after the rename) replays it and finds no log', async () => {
      const dir = tempDir();
      const path = join(dir, 'log');
      copyFileSync(FIXTURE, `${path}.to_compress`);
      const seen: LogRecord[] = [];
      expect(await replayStartup(path, (r) => seen.push(r), silentLogger())).to.deep.equal({ records: 12, tornBytes: 0, leftover: true });
      expect(seen).to.deep.equal(FIXTURE_RECORDS);
    });
  });
});
