// Flow control of one TCP connection (lib/protocol/session.ts): whatever a client pipelines,
// the session takes lines only while fewer than MAX_OUTSTANDING are unanswered, fewer than
// MAX_BACKLOG_BYTES are unwritten and no listing is streaming; listings arrive from the
// primary a page at a time, the next page asked for only once the previous one was taken.
import { expect } from 'chai';
import type { Job } from '../../../lib/domain/job.ts';
import { MAX_BACKLOG_BYTES, MAX_OUTSTANDING, PAGE_LOW_WATER } from '../../../lib/protocol/session.ts';
import { DONE, harness, settled } from './session-harness.ts';

const job = (id: string): Job => ({ id, execution: 5n, status: 'planned' });
const page = (ids: string[], next: number | null) => ({ ok: true as const, kind: 'jobs' as const, jobs: ids.map(job), next });

describe('protocol/session flow control', () => {
  it('a client pipelining without end: at most MAX_OUTSTANDING commands reach the primary, reading pauses', async () => {
    const h = harness(null);
    const lines = Array.from({ length: MAX_OUTSTANDING + 3000 }, (_, i) => `${i} STAT\n`).join('');
    h.feed(lines);
    expect(h.pending).to.have.length(MAX_OUTSTANDING);
    expect(h.paused).to.equal(true);
    for (const p of h.pending.splice(0)) p.answer(DONE);
    await settled();
    expect(h.pending).to.have.length(3000);
    expect(h.paused).to.equal(false);
    for (const p of h.pending.splice(0)) p.answer(DONE);
    await settled();
    const out = h.written().split('\n').slice(0, -1);
    expect(out).to.have.length(MAX_OUTSTANDING + 3000);
    expect(out.every((l, i) => l === `${i} OK`)).to.equal(true);
  });

  it('while unwritten bytes are over MAX_BACKLOG_BYTES no line is taken; the socket draining resumes', async () => {
    const h = harness(null);
    h.setBacklog(MAX_BACKLOG_BYTES);
    h.feed('1 STAT\n2 STAT\n');
    expect(h.pending).to.have.length(0);
    expect(h.paused).to.equal(true);
    h.setBacklog(0);
    h.session.writable();
    expect(h.pending.map((p) => p.cmd.op)).to.deep.equal(['stat', 'stat']);
    expect(h.paused).to.equal(false);
  });

  it('QUERY streams page by page, asking for the next page only once the previous one was taken', async () => {
    const h = harness(null);
    h.feed('q QUERY a.\n');
    expect(h.pending).to.have.length(1);
    expect(h.pending[0]!.cmd).to.include({ op: 'job.list', prefix: 'a.', cursor: 0 });
    h.setBacklog(PAGE_LOW_WATER); // the socket has not taken the first page yet
    h.pending.shift()!.answer(page(['a.1', 'a.2'], 17));
    await settled();
    expect(h.written()).to.equal('q a.1 planned 5\nq a.2 planned 5\n');
    expect(h.pending).to.have.length(0);
    h.setBacklog(0);
    h.session.writable();
    expect(h.pending).to.have.length(1);
    expect(h.pending[0]!.cmd).to.include({ op: 'job.list', cursor: 17 });
    h.pending.shift()!.answer(page(['a.3'], null));
    await settled();
    expect(h.written()).to.equal('q a.1 planned 5\nq a.2 planned 5\nq a.3 planned 5\nq OK\n');
    expect(h.requests.map((r) => [r.rid, r.instruction, r.success])).to.deep.equal([['q', 'QUERY', true]]);
  });

  it('lines after a listing wait for its end, so 1 000 pipelined QUERYs hold one page at a time', async () => {
    const h = harness(null);
    h.feed(Array.from({ length: 1000 }, (_, i) => `q${i} QUERY\n`).join('') + 's STAT\n');
    expect(h.pending).to.have.length(1);
    expect(h.paused).to.equal(true);
    for (let i = 0; i < 1000; i++) {
      expect(h.pending).to.have.length(1);
      h.pending.shift()!.answer(page([`j${i}`], null));
      await settled();
    }
    expect(h.pending.map((p) => p.cmd.op)).to.deep.equal(['stat']);
    h.pending.shift()!.answer({ ok: true, kind: 'stat', stat: {} as never });
    await settled();
    const out = h.written();
    expect(out.startsWith('q0 j0 planned 5\nq0 OK\nq1 j1 planned 5\nq1 OK\n')).to.equal(true);
    expect(out).to.include('q999 j999 planned 5\nq999 OK\n');
  });

  it('a listing behind an unanswered command keeps its page until its turn, in order', async () => {
    const h = harness(null);
    h.feed('g GET a.1\nq LISTRULES\n');
    const [get, list] = h.pending.splice(0);
    list!.answer({ ok: true, kind: 'rules', rules: [{ id: 'r', pattern: 'a.', runner: { type: 'shell', command: 'true' } }], next: 4 });
    await settled();
    expect(h.written()).to.equal('');
    expect(h.pending).to.have.length(0);
    get!.answer({ ok: false, code: 'not_found', message: 'job "a.1" does not exist' });
    await settled();
    expect(h.written()).to.equal('g ERROR not_found job "a.1" does not exist\nq r a. shell true\n');
    expect(h.pending[0]!.cmd).to.include({ op: 'rule.list', cursor: 4 });
  });

  it('an error on a later page ends the listing with ERROR after the lines already written', async () => {
    const h = harness(null);
    h.feed('q QUERY\n');
    h.pending.shift()!.answer(page(['a'], 3));
    await settled();
    h.pending.shift()!.answer({ ok: false, code: 'internal', message: '' });
    await settled();
    expect(h.written()).to.equal('q a planned 5\nq ERROR internal\n');
    h.feed('n STAT\n');
    expect(h.pending.map((p) => p.cmd.op)).to.deep.equal(['stat']);
  });

  it('whenAnswered waits for a streaming listing and for lines still unread in the framer', async () => {
    const h = harness(null);
    h.feed('q QUERY\ns STAT\n');
    let answered = false;
    h.session.whenAnswered(() => { answered = true; });
    h.pending.shift()!.answer(page([], null));
    await settled();
    expect(answered).to.equal(false);
    h.pending.shift()!.answer(DONE);
    await settled();
    expect(answered).to.equal(true);
  });

  it('after endInput, framed lines are still answered but reading never resumes', async () => {
    const h = harness(null);
    h.feed('q QUERY\ns STAT\n');
    h.session.endInput();
    h.pending.shift()!.answer(page([], null));
    await settled();
    expect(h.pending.map((p) => p.cmd.op)).to.deep.equal(['stat']);
    expect(h.paused).to.equal(true);
  });
});
