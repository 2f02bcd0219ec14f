import { expect } from 'chai';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { ClusterKeys } from '../../../lib/jetstream/cluster-keys.ts';
import { QuarantineBook } from '../../../lib/leadership/quarantine-book.ts';
import { silentLogger } from '../../../lib/log.ts';

const job = (id: string): LogRecord => ({ t: 'job', job: { id, execution: 5n, status: 'planned' } });

describe('QuarantineBook: what a node owes the stream', () => {
  const book = (): QuarantineBook => {
    const b = new QuarantineBook({
      keys: new ClusterKeys(['k'.repeat(40)]), log: silentLogger(), counted: () => {},
      identifierOf: (subject) => (subject.startsWith('c.j.') ? { kind: 'job', id: subject.slice(4) } : null),
      owe: (_kind, id) => job(id),
    });
    b.verified();
    return b;
  };
  const junk = (b: QuarantineBook, seq: number, subject: string): void => b.quarantined({ seq, subject, why: 'junk', deletable: true });

  it('owes only what its copy held when it met the message, and keeps it through a rebuild until written after it', () => {
    const b = book();
    b.rebuilding();
    junk(b, 3, 'c.j.a'); // met while the copy was built: the copy never had what it pushed out
    b.following();
    junk(b, 7, 'c.j.b');
    junk(b, 8, 'c.x'); // no identifier's subject: nothing to write again
    expect(b.strays()).to.deep.equal([{ seq: 7, subject: 'c.j.b', owed: job('b'), certain: false }]);
    b.rebuilding();
    b.written('c.j.b', 5); // the checkpoint's older record: still owed
    expect(b.strays().map((s) => s.seq)).to.deep.equal([7]);
    b.written('c.j.b', 9); // written again since: settled
    expect(b.strays()).to.deep.equal([]);
    b.following();
    junk(b, 12, 'c.j.c');
    expect(b.owedAt(12)).to.deep.equal(job('c'));
    b.settled([12]);
    expect(b.strays()).to.deep.equal([]);
    // A subject that held a foreign message when the copy was built: the copy cannot speak for
    // it (it would owe a removal of a live job) until a record of the cluster's lands there.
    junk(b, 14, 'c.j.a');
    expect(b.owedAt(14)).to.equal(undefined);
    b.written('c.j.a', 15);
    junk(b, 16, 'c.j.a');
    expect(b.owedAt(16)).to.deep.equal(job('a'));
  });

  it('does not speak for a subject whose message the tail met before it first reached the end: the copy may lack its last write', () => {
    const b = book();
    b.following();
    b.quarantined({ seq: 20, subject: 'c.j.d', why: 'junk', deletable: true, behind: true });
    expect(b.owedAt(20)).to.equal(undefined);
    junk(b, 21, 'c.j.d'); // nor for a later one there, until a record of the cluster's lands
    expect(b.owedAt(21)).to.equal(undefined);
    b.written('c.j.d', 22);
    junk(b, 23, 'c.j.d');
    expect(b.owedAt(23)).to.deep.equal(job('d'));
  });

  it('owes for sure what an ended tenure\'s copy held, and tells it in its claims', async () => {
    const b = book();
    b.following();
    junk(b, 30, 'c.j.e');
    await b.asLeaderCopy(async () => { junk(b, 31, 'c.j.f'); });
    junk(b, 32, 'c.j.g');
    expect(b.claims()).to.deep.equal([
      { seq: 30, subject: 'c.j.e', owed: job('e'), certain: false },
      { seq: 31, subject: 'c.j.f', owed: job('f'), certain: true },
      { seq: 32, subject: 'c.j.g', owed: job('g'), certain: false },
    ]);
  });
});
