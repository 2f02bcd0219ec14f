// What a cluster node answers itself (the 'cluster' command) and what goes on to the engine or
// the leader: split out of a batch, the replies merged back in the batch's order; and the
// leader journal that refuses writes while the node does not lead.
import { expect } from 'chai';
import type { Command, Reply } from '../../../lib/domain/command.ts';
import { NotWritingError, type Journal, type LogRecord } from '../../../lib/engine/journal.ts';
import { LeaderJournal } from '../../../lib/leadership/leader-journal.ts';
import { answerLocally } from '../../../lib/leadership/local-ops.ts';

const VIEW: Reply = { ok: true, kind: 'cluster', cluster: { cluster: 'c', node: 'n', role: 'follower', leader: null, lastSeq: 0, appliedSeq: 0, nodes: [], format: 2, activeFormat: 2, upgradeNeeded: null } };
const done = (id: string): Reply => ({ ok: true, kind: 'job', job: { id, execution: 1n, status: 'planned' } });

function run(cmds: Command[]): { forwarded: Command[][]; replies: Reply[] | null } {
  const forwarded: Command[][] = [];
  let replies: Reply[] | null = null;
  answerLocally(cmds, () => VIEW, (rest, answer) => {
    forwarded.push([...rest]);
    answer(rest.map((c) => done((c as { id: string }).id)));
  }, (r) => { replies = r; });
  return { forwarded, replies };
}

describe('leadership/local-ops answerLocally', () => {
  it('passes a batch without cluster commands through untouched', () => {
    const cmds: Command[] = [{ op: 'job.get', id: 'a' }, { op: 'job.get', id: 'b' }];
    const { forwarded, replies } = run(cmds);
    expect(forwarded).to.deep.equal([cmds]);
    expect(replies).to.deep.equal([done('a'), done('b')]);
  });

  it('answers a batch of cluster commands alone, forwarding nothing', () => {
    const { forwarded, replies } = run([{ op: 'cluster' }, { op: 'cluster' }]);
    expect(forwarded).to.deep.equal([]);
    expect(replies).to.deep.equal([VIEW, VIEW]);
  });

  it('merges local and forwarded replies back in the batch order', () => {
    const { forwarded, replies } = run([{ op: 'job.get', id: 'a' }, { op: 'cluster' }, { op: 'job.get', id: 'b' }, { op: 'cluster' }]);
    expect(forwarded).to.deep.equal([[{ op: 'job.get', id: 'a' }, { op: 'job.get', id: 'b' }]]);
    expect(replies).to.deep.equal([done('a'), VIEW, done('b'), VIEW]);
  });
});

describe('leadership/leader-journal LeaderJournal', () => {
  it('refuses writes with NotWritingError until a tenure journal is in use, and again after', async () => {
    const lj = new LeaderJournal();
    const rec: LogRecord = { t: 'job.removed', id: 'x' };
    expect(() => lj.append(rec)).to.throw(NotWritingError);
    let caught: unknown = null;
    await lj.flush().catch((e: unknown) => { caught = e; });
    expect(caught).to.be.instanceOf(NotWritingError);
    const seen: LogRecord[] = [];
    const inner: Journal = { append: (r) => { seen.push(r); }, flush: async () => {}, close: async () => {} };
    lj.use(inner);
    lj.append(rec);
    await lj.flush();
    expect(seen).to.deep.equal([rec]);
    lj.use(null);
    expect(() => lj.append(rec)).to.throw(NotWritingError);
  });
});
