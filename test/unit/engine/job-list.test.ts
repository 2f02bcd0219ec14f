// The job.list handler over a real JobStore: the optional status filter (GET /jobs?status=)
// combined with prefix and scope, pages that stay within SCAN_PER_PAGE slots however rare the
// status (possibly empty but with a next cursor), and no walk at all when no job has a wanted
// status. Without `statuses` the listing is exactly what it was (QUERY never sets it).
import { expect } from 'chai';
import type { Command, Reply } from '../../../lib/domain/command.ts';
import type { Job, JobStatus } from '../../../lib/domain/job.ts';
import { SCAN_PER_PAGE } from '../../../lib/domain/page.ts';
import { jobList } from '../../../lib/engine/commands/job-list.ts';
import type { EngineContext } from '../../../lib/engine/commands/context.ts';
import { JobStore } from '../../../lib/store/jobs.ts';

type ListCmd = Extract<Command, { op: 'job.list' }>;
type JobsReply = Extract<Reply, { kind: 'jobs' }>;

const T = 1_700_000_000_000_000_000n;
const STATUSES: readonly JobStatus[] = ['planned', 'triggered', 'executed', 'failed'];

function list(store: JobStore, cmd: Partial<ListCmd>): JobsReply {
  // The handler reads nothing but the job store.
  const ctx = { jobs: store } as unknown as EngineContext;
  const reply = jobList(ctx, { op: 'job.list', prefix: '', scope: '', cursor: 0, limit: 1000, ...cmd });
  if (!reply.ok || reply.kind !== 'jobs') throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
  return reply;
}

/** Every page from cursor 0 on, `limit` at a time; checks that each cursor moves forward. */
function walk(store: JobStore, cmd: Partial<ListCmd>, limit = 2): Job[] {
  const out: Job[] = [];
  let cursor: number | null = 0;
  while (cursor !== null) {
    const page = list(store, { ...cmd, cursor, limit });
    expect(page.jobs.length).to.be.at.most(limit);
    if (page.next !== null) expect(page.next).to.be.above(cursor);
    out.push(...page.jobs);
    cursor = page.next;
  }
  return out;
}

const ids = (jobs: readonly Job[]): string[] => jobs.map((j) => j.id).sort();

describe('engine/commands/job-list', () => {
  let store: JobStore;

  beforeEach(() => {
    store = new JobStore();
    // Statuses interleaved across slots: team1.0 planned, team1.1 triggered, team1.2 executed, ...
    for (let i = 0; i < 12; i++) {
      for (const team of ['team1', 'team2']) store.put({ id: `${team}.${i}`, execution: T + BigInt(i), status: STATUSES[i % 4]! });
    }
  });

  it('without statuses lists every job, as before', () => {
    expect(walk(store, {})).to.have.length(24);
  });

  it('keeps only the wanted statuses, with prefix and scope still applied', () => {
    expect(ids(walk(store, { statuses: ['failed'] }))).to.deep.equal(['team1.11', 'team1.3', 'team1.7', 'team2.11', 'team2.3', 'team2.7']);
    expect(walk(store, { statuses: ['failed'] }).every((j) => j.status === 'failed')).to.equal(true);
    expect(ids(walk(store, { statuses: ['planned', 'executed'], prefix: 'team2.1' }))).to.deep.equal(['team2.10']);
    expect(ids(walk(store, { statuses: ['triggered'], scope: 'team1.' }))).to.deep.equal(['team1.1', 'team1.5', 'team1.9']);
    expect(walk(store, { statuses: ['triggered'], prefix: 'team2.', scope: 'team1.' })).to.deep.equal([]);
    expect(walk(store, { statuses: [...STATUSES] })).to.have.length(24);
  });

  it('fills a page up to limit from slots further on', () => {
    const page = list(store, { statuses: ['executed'], limit: 4 });
    expect(page.jobs.map((j) => j.status)).to.deep.equal(['executed', 'executed', 'executed', 'executed']);
    expect(page.next).to.be.a('number');
  });

  it('examines at most SCAN_PER_PAGE slots per page, however rare the status', () => {
    const big = new JobStore();
    for (let i = 0; i < SCAN_PER_PAGE + 10; i++) big.put({ id: `j${i}`, execution: T, status: 'planned' });
    big.setStatus(`j${SCAN_PER_PAGE + 5}`, 'failed');
    const first = list(big, { statuses: ['failed'], limit: 10 });
    expect(first).to.deep.include({ jobs: [], next: SCAN_PER_PAGE });
    const second = list(big, { statuses: ['failed'], limit: 10, cursor: first.next! });
    expect(second.jobs.map((j) => j.id)).to.deep.equal([`j${SCAN_PER_PAGE + 5}`]);
    expect(second.next).to.equal(null);
  });

  it('ends at once when no job has a wanted status (or the name is unknown to the store)', () => {
    const big = new JobStore();
    for (let i = 0; i < SCAN_PER_PAGE + 10; i++) big.put({ id: `j${i}`, execution: T, status: 'planned' });
    expect(list(big, { statuses: ['failed', 'executed'] })).to.deep.include({ jobs: [], next: null });
    expect(list(big, { statuses: [] })).to.deep.include({ jobs: [], next: null });
    expect(list(big, { statuses: ['bogus' as JobStatus] })).to.deep.include({ jobs: [], next: null });
  });
});
