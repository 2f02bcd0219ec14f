import { expect } from 'chai';
import { FORMAT_VERSION } from '../../../lib/domain/format.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { FORGET_BEHIND_MS, FormatMark, SETTLED_MS, type FormatView } from '../../../lib/leadership/format-mark.ts';
import { silentLogger } from '../../../lib/log.ts';

/** Members that read `formats` (by name). */
const view = (formats: Record<string, number>): FormatView => ({
  formats: () => new Map(Object.entries(formats)),
});

describe('FormatMark: the cluster\'s active format', () => {
  it('is recorded only once every node has read this format for SETTLED_MS, once', async () => {
    const mark = new FormatMark();
    const written: LogRecord[] = [];
    const write = async (rec: LogRecord): Promise<void> => { written.push(rec); };
    const log = silentLogger();
    mark.consider(view({ n1: FORMAT_VERSION, n2: 1 }), write, log, 0);
    mark.consider(view({ n1: FORMAT_VERSION, n2: FORMAT_VERSION }), write, log, 1_000);
    mark.consider(view({ n1: FORMAT_VERSION, n2: FORMAT_VERSION }), write, log, 1_000 + SETTLED_MS - 1);
    expect(written).to.deep.equal([]);
    // A node back on its old version in between starts the wait again.
    mark.consider(view({ n1: FORMAT_VERSION, n2: 1 }), write, log, 1_000 + SETTLED_MS);
    mark.consider(view({ n1: FORMAT_VERSION, n2: FORMAT_VERSION }), write, log, 2_000 + SETTLED_MS);
    expect(written).to.deep.equal([]);
    mark.consider(view({ n1: FORMAT_VERSION, n2: FORMAT_VERSION }), write, log, 2_000 + 2 * SETTLED_MS);
    expect(written).to.deep.equal([{ t: 'format', version: FORMAT_VERSION }]);
    await new Promise((r) => setImmediate(r));
    expect(mark.recorded).to.equal(FORMAT_VERSION);
    mark.consider(view({ n1: FORMAT_VERSION, n2: FORMAT_VERSION }), write, log, 3_000 + 3 * SETTLED_MS);
    expect(written).to.have.length(1);
  });

  it('waits for a node seen on an older format that left the view (stopped to be upgraded) to come back on this one', () => {
    const mark = new FormatMark();
    const written: LogRecord[] = [];
    const write = async (rec: LogRecord): Promise<void> => { written.push(rec); };
    mark.consider(view({ n1: FORMAT_VERSION, n3: 1 }), write, silentLogger(), 0);
    mark.consider(view({ n1: FORMAT_VERSION }), write, silentLogger(), 1_000);
    mark.consider(view({ n1: FORMAT_VERSION }), write, silentLogger(), 1_000 + 2 * SETTLED_MS);
    expect(written).to.deep.equal([]);
    expect(mark.gate(FORMAT_VERSION, view({ n1: FORMAT_VERSION }))).to.match(/nodes behind: n3/);
    mark.consider(view({ n1: FORMAT_VERSION, n3: FORMAT_VERSION }), write, silentLogger(), 2_000 + 2 * SETTLED_MS);
    mark.consider(view({ n1: FORMAT_VERSION, n3: FORMAT_VERSION }), write, silentLogger(), 2_000 + 3 * SETTLED_MS);
    expect(written).to.have.length(1);
  });

  it('a follower remembers a node it saw on an older format, for when it takes over', () => {
    const mark = new FormatMark();
    const written: LogRecord[] = [];
    mark.observe(view({ n1: FORMAT_VERSION, n2: FORMAT_VERSION, n3: 1 }), 0); // n3 leads, on its old version
    mark.consider(view({ n1: FORMAT_VERSION, n2: FORMAT_VERSION }), async (rec) => { written.push(rec); }, silentLogger(), 2 * SETTLED_MS);
    expect(written).to.deep.equal([]);
  });

  it('forgets a node that stays away FORGET_BEHIND_MS (retired, not upgraded)', () => {
    const mark = new FormatMark();
    const written: LogRecord[] = [];
    const write = async (rec: LogRecord): Promise<void> => { written.push(rec); };
    mark.consider(view({ n1: FORMAT_VERSION, n3: 1 }), write, silentLogger(), 0);
    mark.consider(view({ n1: FORMAT_VERSION }), write, silentLogger(), FORGET_BEHIND_MS + 1);
    mark.consider(view({ n1: FORMAT_VERSION }), write, silentLogger(), FORGET_BEHIND_MS + 2 + SETTLED_MS);
    expect(written).to.have.length(1);
  });

  it('refuses what needs a format the stream does not record, naming the nodes behind', () => {
    const mark = new FormatMark();
    expect(mark.gate(1, view({ n1: FORMAT_VERSION }))).to.equal(null);
    expect(mark.gate(FORMAT_VERSION, view({ n1: FORMAT_VERSION, n3: 1 }))).to.match(/active format is 1 \(nodes behind: n3\)/);
    expect(mark.gate(FORMAT_VERSION, view({ n1: FORMAT_VERSION }))).to.match(/every node reads it; the cluster records it within 30 s/);
    expect(mark.gate(FORMAT_VERSION + 1, view({ n1: FORMAT_VERSION }))).to.match(new RegExp(`this node reads ${FORMAT_VERSION}`));
    mark.seen({ t: 'format', version: FORMAT_VERSION });
    expect(mark.gate(FORMAT_VERSION, view({ n1: FORMAT_VERSION, n3: 1 }))).to.equal(null);
    mark.rebuilding();
    expect(mark.recorded).to.equal(1);
  });
});
