// The leader's checkpoint schedule (lib/leadership/checkpoint-schedule.ts): when a checkpoint is due,
// one at a time, what a made one hands back, and the pause after a failure.
import { expect } from 'chai';
import sinon from 'sinon';
import type { ClusterOptions } from '../../../lib/cli.ts';
import type { CheckpointMade } from '../../../lib/jetstream/checkpoint-make.ts';
import { CheckpointSchedule } from '../../../lib/leadership/checkpoint-schedule.ts';
import { silentLogger } from '../../../lib/log.ts';
import { testSecretFile } from '../../helpers/cluster-secret.ts';

const cluster: ClusterOptions = { urls: ['nats://h:1'], credsFile: null, caFile: null, name: 'c', nodeName: 'n', replicas: 1, leaseTtlMs: 3000, checkpointRecords: 100, secretFile: testSecretFile(), allowUnauthenticatedNats: false, nodeTags: null };
const made = (seq: number, removals: number[] = []): CheckpointMade => ({ seq, records: 1, bytes: 1, read: 1, removals });

describe('the leader\'s checkpoint schedule', () => {
  afterEach(() => sinon.restore());

  it('is due at --checkpoint-records written after the last, or a quarter of the state if that is more', async () => {
    let answer: (m: CheckpointMade | null) => void = () => {};
    const run = sinon.spy(() => new Promise<CheckpointMade | null>((r) => { answer = r; }));
    const s = new CheckpointSchedule({ run, cluster, log: silentLogger() });
    s.known(1_000);
    s.consider(1_099, 10, () => {});
    expect(run.callCount, '99 records after the last').to.equal(0);
    s.consider(1_100, 400, () => {});
    expect(run.callCount, '100 records, a quarter of 400').to.equal(1);
    s.consider(5_000, 400, () => {});
    expect(run.callCount, 'one at a time').to.equal(1);
    const got: CheckpointMade[] = [];
    answer(made(1_100, [1_050]));
    await new Promise((r) => setImmediate(r));
    expect(s.busy).to.equal(false);
    s.consider(1_250, 1_000, (m) => got.push(m));
    expect(run.callCount, '150 records, fewer than a quarter of 1000').to.equal(1);
    s.consider(1_350, 1_000, (m) => got.push(m));
    expect(run.callCount).to.equal(2);
    answer(made(1_350, [1_300, 1_301]));
    await new Promise((r) => setImmediate(r));
    expect(got.map((m) => m.removals)).to.deep.equal([[1_300, 1_301]]);
  });

  it('counts from where the stream was when none was made (another node\'s won), and waits after a failure', async () => {
    const clock = sinon.useFakeTimers({ toFake: ['performance'] });
    let next: Promise<CheckpointMade | null> = Promise.resolve(null);
    const run = sinon.spy(() => next);
    const s = new CheckpointSchedule({ run, cluster, log: silentLogger() });
    s.consider(500, 0, () => {});
    await new Promise((r) => setImmediate(r));
    s.consider(599, 0, () => {});
    expect(run.callCount, 'counted from 500').to.equal(1);
    next = Promise.reject(new Error('NATS lost'));
    s.consider(600, 0, () => {});
    await new Promise((r) => setImmediate(r));
    s.consider(10_000, 0, () => {});
    expect(run.callCount, 'no new try at once after a failure').to.equal(2);
    clock.tick(30_000);
    s.consider(10_000, 0, () => {});
    expect(run.callCount).to.equal(3);
  });

  it('makes a tenure\'s first checkpoint from the whole stream, the next ones from the last', async () => {
    let calls = 0;
    const run = sinon.spy((_c: ClusterOptions, _whole: boolean): Promise<CheckpointMade | null> => Promise.resolve(made(++calls * 1_000)));
    const s = new CheckpointSchedule({ run, cluster, log: silentLogger() });
    const turn = async (lastSeq: number): Promise<void> => {
      s.consider(lastSeq, 0, () => {});
      await new Promise((r) => setImmediate(r));
    };
    await turn(1_000);
    await turn(2_000);
    s.leading();
    await turn(3_000);
    await turn(4_000);
    expect(run.args.map((a: [ClusterOptions, boolean]) => a[1])).to.deep.equal([true, false, true, false]);
  });
});
