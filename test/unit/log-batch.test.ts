import { expect } from 'chai';
import sinon from 'sinon';
import { BatchedLines, FLUSH_DELAY_MS, MAX_BATCH, flushLog } from '../../lib/log-batch.ts';
import { createLogger } from '../../lib/log.ts';

function recorder(): { out: { write(text: string): void }; writes: string[] } {
  const writes: string[] = [];
  return { out: { write: (text: string) => { writes.push(text); } }, writes };
}

describe('log lines in batches', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => { clock = sinon.useFakeTimers(); });
  afterEach(() => { clock.restore(); });

  it('writes the lines of a busy moment in one call, in order, FLUSH_DELAY_MS later', () => {
    const { out, writes } = recorder();
    const lines = new BatchedLines(out);
    for (let i = 0; i < 1000; i++) lines.write(`line ${i}\n`);
    expect(writes).to.deep.equal([]);
    clock.tick(FLUSH_DELAY_MS - 1);
    expect(writes).to.deep.equal([]);
    clock.tick(1);
    expect(writes).to.have.length(1);
    expect(writes[0]!.split('\n').slice(0, -1)).to.deep.equal(Array.from({ length: 1000 }, (_, i) => `line ${i}`));
    clock.tick(FLUSH_DELAY_MS * 10);
    expect(writes).to.have.length(1);
  });

  it('writes at once when MAX_BATCH bytes wait, and again later for what came after', () => {
    const { out, writes } = recorder();
    const lines = new BatchedLines(out);
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < MAX_BATCH / line.length; i++) lines.write(line);
    expect(writes).to.have.length(1);
    expect(writes[0]).to.have.length(MAX_BATCH);
    lines.write('after\n');
    clock.tick(FLUSH_DELAY_MS);
    expect(writes).to.deep.equal([writes[0], 'after\n']);
  });

  it('a flush with nothing waiting writes nothing; an output that throws loses the batch, not the caller', () => {
    const lines = new BatchedLines({ write: () => { throw new Error('EPIPE'); } });
    lines.flush();
    lines.write('lost\n');
    expect(() => lines.flush()).not.to.throw();
    expect(() => clock.tick(FLUSH_DELAY_MS)).not.to.throw();
  });
});

describe('the logger writes through the batch', () => {
  let write: sinon.SinonStub;
  beforeEach(() => {
    flushLog();
    write = sinon.stub(process.stderr, 'write').returns(true);
  });
  afterEach(() => { write.restore(); });

  it('holds debug lines, and writes an info line at once with what waited before it', () => {
    const log = createLogger('debug', 'test');
    log.debug({ n: 1 }, 'first');
    log.debug({ n: 2 }, 'second');
    expect(write.callCount).to.equal(0);
    log.info({ n: 3 }, 'third');
    expect(write.callCount).to.equal(1);
    const records = String(write.firstCall.args[0]).trim().split('\n').map((l) => JSON.parse(l) as { msg: string; role: string });
    expect(records.map((r) => r.msg)).to.deep.equal(['first', 'second', 'third']);
    expect(records[0]!.role).to.equal('test');
  });

  it('a logger at warn writes a warning at once; one at off writes nothing, errors included', () => {
    createLogger('warn', 'test').warn('now');
    expect(write.callCount).to.equal(1);
    write.resetHistory();
    const log = createLogger('off', 'test');
    log.error('nothing');
    log.fatal('nothing');
    flushLog();
    expect(write.callCount).to.equal(0);
  });
});
