// `tickd dump`: text and JSON lines of the ztick fixture, --compact, quoting, exact integers,
// exit statuses, and --follow across a real compaction.
import { expect } from 'chai';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { silentLogger } from '../../../lib/log.ts';
import { encodeRecord } from '../../../lib/logfile/codec.ts';
import { Compactor } from '../../../lib/logfile/compact.ts';
import { runDump } from '../../../lib/tools/dump.ts';
import type { DumpOptions } from '../../../lib/tools/dump.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { FileJournal } from '../../../lib/logfile/writer.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { inProcessFolds } from '../../helpers/folds.ts';

const FIXTURE = new URL('../../fixtures/logfile/ztick-v1.log', import.meta.url);

class Collector extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString('utf8');
    cb();
  }
  get lines(): string[] {
    return this.text.split('\n').filter((l) => l !== '');
  }
}

async function dump(argv: string[], opts: DumpOptions = {}) {
  const out = new Collector();
  const err = new Collector();
  const code = await runDump(argv, out, err, opts);
  return { code, out: out.lines, err: err.text };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const TEXT = [
  'planned SET toto 1605457800000000000',
  'rule RULE SET t toto shell titi',
  'rule RULE SET ta tot amqp amqp://guest:guest@localhost:5672/ "" jobs',
  'executed SET tatat 1605457800000000000',
  'triggered SET toto 1605457800000000001',
  'rule RULE SET h app.hook. http POST https://hooks.example.com/x',
  'rule RULE SET d app. direct /bin/echo "hello world" ""',
  'rule RULE SET w app.wf. awf report --input format=pdf',
  'rule RULE SET r app.redis. redis redis://localhost:6379/0 RPUSH queue',
  'removed REMOVE tatat',
  'removed REMOVERULE ta',
  'failed SET neg -1',
];

describe('logfile/dump', () => {
  it('prints the ztick fixture as protocol-like text lines', async () => {
    const r = await dump([FIXTURE.pathname]);
    expect(r).to.deep.equal({ code: 0, out: TEXT, err: '' });
  });

  it('prints one JSON object per line', async () => {
    const r = await dump([FIXTURE.pathname, '--format', 'json']);
    expect(r.code).to.equal(0);
    expect(r.out[0]).to.equal('{"type":"job","id":"toto","execution":1605457800000000000,"status":"planned"}');
    expect(r.out[2]).to.equal('{"type":"rule","id":"ta","pattern":"tot","runner":{"type":"amqp","dsn":"amqp://guest:guest@localhost:5672/","exchange":"","routing_key":"jobs"}}');
    expect(r.out[6]).to.equal('{"type":"rule","id":"d","pattern":"app.","runner":{"type":"direct","executable":"/bin/echo","args":["hello world",""]}}');
    expect(r.out[9]).to.equal('{"type":"job.removed","id":"tatat"}');
    expect(r.out[10]).to.equal('{"type":"rule.removed","id":"ta"}');
    expect(r.out[11]).to.equal('{"type":"job","id":"neg","execution":-1,"status":"failed"}');
    for (const line of r.out) JSON.parse(line);
  });

  it('writes executions beyond 2^53 as exact integers', async () => {
    const path = join(tempDir(), 'log');
    writeFileSync(path, encodeRecord({ t: 'job', job: { id: 'big', execution: 1775822400123456789n, status: 'planned' } }));
    const r = await dump([path, '--format=json']);
    expect(r.out).to.deep.equal(['{"type":"job","id":"big","execution":1775822400123456789,"status":"planned"}']);
    expect((await dump([path])).out).to.deep.equal(['planned SET big 1775822400123456789']);
  });

  it('--compact keeps the last state per kind and identifier, without removed entries', async () => {
    const r = await dump([FIXTURE.pathname, '--compact']);
    expect(r.out).to.deep.equal([TEXT[1], TEXT[4], TEXT[5], TEXT[6], TEXT[7], TEXT[8], TEXT[11]]);
    const path = join(tempDir(), 'log');
    const same: LogRecord[] = [
      { t: 'job', job: { id: 'x', execution: 1n, status: 'planned' } },
      { t: 'rule', rule: { id: 'x', pattern: 'x', runner: { type: 'shell', command: 'a' } } },
      { t: 'rule.removed', id: 'x' },
    ];
    writeFileSync(path, Buffer.concat(same.map(encodeRecord)));
    expect((await dump([path, '--compact', '--format', 'json'])).out).to.deep.equal(['{"type":"job","id":"x","execution":1,"status":"planned"}']);
  });

  it('usage errors exit 2 with the usage on stderr', async () => {
    for (const argv of [[], ['a', 'b'], ['a', '--format', 'xml'], ['a', '--bogus'], ['a', '--format']]) {
      const r = await dump(argv);
      expect(r.code, argv.join(' ')).to.equal(2);
      expect(r.err).to.match(/^tickd dump: .*\nUsage: tickd dump LOGFILE/);
      expect(r.out).to.deep.equal([]);
    }
  });

  it('an unreadable file exits 1', async () => {
    const missing = await dump([join(tempDir(), 'absent')]);
    expect(missing.code).to.equal(1);
    expect(missing.err).to.match(/^tickd dump: cannot read .*absent: .*ENOENT/);
    const dir = await dump([tempDir()]);
    expect(dir.code).to.equal(1);
    expect(dir.err).to.match(/EISDIR/);
  });

  it('a corrupt record: prints what precedes it, then the offset, exit 1', async () => {
    const path = join(tempDir(), 'log');
    const bytes = readFileSync(FIXTURE);
    bytes[100 + 4 + 1 + 2 + 5 + 8] = 0x42; // the status byte of job tatat
    writeFileSync(path, bytes);
    const r = await dump([path]);
    expect(r.code).to.equal(1);
    expect(r.out).to.deep.equal(TEXT.slice(0, 3));
    expect(r.err).to.equal(`tickd dump: ${path}: record at byte offset 100 does not decode: unknown job status byte 66 (byte offset 120)\n`);
  });

  it('a newer tickd\'s record: prints what precedes it, then one line naming its format, exit 1', async () => {
    const path = join(tempDir(), 'log');
    const bytes = Buffer.concat([readFileSync(FIXTURE), Buffer.from([0, 0, 0, 4, 0x10, 0, 7, 0xff])]);
    writeFileSync(path, bytes);
    for (const format of ['text', 'json']) {
      const r = await dump([path, '--format', format]);
      expect(r.code).to.equal(1);
      expect(r.out).to.have.length(12);
      expect(r.err).to.equal(`tickd dump: ${path}: a record of tickd format 7 at byte offset 380; this tickd reads format 6 and older: upgrade tickd to read this log\n`);
    }
    expect(readFileSync(path).equals(bytes)).to.equal(true);
  });

  it('a format mark is one line of its own; --compact leaves it out (no state)', async () => {
    const path = join(tempDir(), 'log');
    writeFileSync(path, Buffer.concat([encodeRecord({ t: 'format', version: 2 }), readFileSync(FIXTURE)]));
    expect((await dump([path])).out).to.deep.equal(['format FORMAT 2', ...TEXT]);
    expect((await dump([path, '--format', 'json'])).out[0]).to.equal('{"type":"format","version":2}');
    const compact = await dump([path, '--compact']);
    expect(compact.code).to.equal(0);
    expect(compact.out.some((l) => l.startsWith('format'))).to.equal(false);
  });

  it('prints frames larger than its read window', async () => {
    const path = join(tempDir(), 'log');
    const big: LogRecord = { t: 'rule', rule: { id: 'big', pattern: '', runner: { type: 'direct', executable: 'x', args: new Array<string>(40).fill('z'.repeat(65000)) } } };
    const small = (id: string): LogRecord => ({ t: 'job.removed', id });
    writeFileSync(path, Buffer.concat([small('a'), big, small('b')].map(encodeRecord)));
    const r = await dump([path]);
    expect(r.code).to.equal(0);
    expect(r.out.map((l) => l.slice(0, 30))).to.deep.equal(['removed REMOVE a', 'rule RULE SET big "" direct x ', 'removed REMOVE b']);
    expect(r.out[1]!.length).to.equal('rule RULE SET big "" direct x'.length + 40 * 65001);
  });

  it('a torn final record is reported, not shown, and the file is left alone', async () => {
    const path = join(tempDir(), 'log');
    copyFileSync(FIXTURE, path);
    writeFileSync(path, Buffer.from([0, 0, 0, 40, 0]), { flag: 'a' });
    const r = await dump([path]);
    expect(r.code).to.equal(0);
    expect(r.out).to.deep.equal(TEXT);
    expect(r.err).to.equal(`tickd dump: ${path}: incomplete final record at byte offset 380 (5 bytes), not shown\n`);
    expect(readFileSync(path).length).to.equal(385);
  });

  it('--follow prints appends as they come and survives a compaction without repeating the state', async () => {
    const path = join(tempDir(), 'log');
    const journal = await FileJournal.open({ path, fsync: false, log: silentLogger() });
    const job = (id: string, execution: bigint): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });
    for (let i = 0; i < 100; i++) journal.append(job(`j${i}`, BigInt(i)));
    for (let i = 0; i < 100; i++) journal.append(job(`j${i}`, BigInt(i) + 1000n)); // overwrites
    await journal.flush();

    const out = new Collector();
    const err = new Collector();
    const stop = new AbortController();
    const running = runDump([path, '--follow', '--format', 'json'], out, err, { pollMs: 5, signal: stop.signal });
    await until(() => out.lines.length === 200, 'the initial 200 lines');

    journal.append(job('live', 1n));
    await journal.flush();
    await until(() => out.lines.length === 201, 'the appended line');
    expect(out.lines[200]).to.equal('{"type":"job","id":"live","execution":1,"status":"planned"}');

    const compactor = new Compactor({ path, journal, intervalSec: 0, log: silentLogger(), folds: inProcessFolds() });
    const cycle = compactor.runOnce();
    journal.append(job('during', 2n));
    journal.append({ t: 'job.removed', id: 'j5' });
    await journal.flush();
    expect(await cycle).to.equal('success');
    await compactor.stop();
    journal.append(job('after', 3n));
    await journal.flush();
    await until(() => out.lines.includes('{"type":"job","id":"after","execution":3,"status":"planned"}'), 'the line after the compaction');
    // No more than the three changes: the compacted history is not printed again.
    expect(out.lines.slice(201).sort()).to.deep.equal([
      '{"type":"job","id":"after","execution":3,"status":"planned"}',
      '{"type":"job","id":"during","execution":2,"status":"planned"}',
      '{"type":"job.removed","id":"j5"}',
    ]);
    stop.abort();
    expect(await running).to.equal(0);
    expect(err.text).to.equal('');
    await journal.close();
  });
});
