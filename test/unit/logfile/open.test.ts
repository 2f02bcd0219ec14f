// The startup wiring: replay (leftover first) -> journal -> compactor, as the daemon uses it.
import { expect } from 'chai';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../../lib/log.ts';
import { encodeRecord } from '../../../lib/logfile/codec.ts';
import { openLogfile } from '../../../lib/logfile/open.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { replayStartup } from '../../../lib/logfile/replay.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { inProcessFolds } from '../../helpers/folds.ts';

const job = (id: string, execution: bigint): LogRecord => ({ t: 'job', job: { id, execution, status: 'planned' } });

describe('logfile/open', () => {
  it('replays a leftover then the log, appends through the journal, and folds the leftover on start()', async () => {
    const path = join(tempDir(), 'log');
    writeFileSync(`${path}.to_compress`, Buffer.concat([job('a', 1n), job('b', 1n), job('a', 2n)].map(encodeRecord)));
    writeFileSync(path, encodeRecord({ t: 'job.removed', id: 'b' }));
    const replayed: LogRecord[] = [];
    let cycled!: (outcome: string) => void;
    const cycle = new Promise<string>((r) => { cycled = r; });
    const opened = await openLogfile({
      path, fsync: true, compressionIntervalSec: 0, log: silentLogger(), folds: inProcessFolds(), onRecord: (r) => replayed.push(r), onCompaction: cycled,
    });
    expect(replayed).to.deep.equal([job('a', 1n), job('b', 1n), job('a', 2n), { t: 'job.removed', id: 'b' }]);
    expect(opened.replay).to.deep.equal({ records: 4, tornBytes: 0, leftover: true });
    opened.journal.append(job('c', 3n));
    await opened.journal.flush();
    opened.compactor.start();
    expect(await cycle).to.equal('success');
    expect(opened.compactor.compactions).to.equal(1);
    await opened.compactor.stop();
    await opened.journal.close();
    expect(existsSync(`${path}.to_compress`)).to.equal(false);
    const after: LogRecord[] = [];
    await replayStartup(path, (r) => after.push(r), silentLogger());
    // compacted(leftover) = b then a (last-written order), then the log as it was
    expect(after).to.deep.equal([job('b', 1n), job('a', 2n), { t: 'job.removed', id: 'b' }, job('c', 3n)]);
  });
});
