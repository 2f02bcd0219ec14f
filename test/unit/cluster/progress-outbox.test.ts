// The runner child's 'progress' batching (cluster/ipc/progress-outbox.ts), without processes:
// one message per turn, cut at MAX_BATCH entries, a start never after its response.
import { expect } from 'chai';
import { MAX_BATCH } from '../../../cluster/ipc/channel.ts';
import { ProgressOutbox } from '../../../cluster/ipc/progress-outbox.ts';
import type { ExecutionResponse, FromRunnerChild } from '../../../cluster/ipc/runner-messages.ts';

type Progress = Extract<FromRunnerChild, { t: 'progress' }>;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const response = (attempt: string): ExecutionResponse => ({ attempt, success: true, startedNs: 1n, durationNs: 2n, outcome: { kind: 'exit', status: 0, stderr: '' } });

describe('cluster/ipc/progress-outbox', () => {
  it('sends the starts and responses of one turn as one message, after the turn', async () => {
    const sent: Progress[] = [];
    const o = new ProgressOutbox((m) => sent.push(m));
    o.started('a', 10n);
    o.response(response('a'));
    o.started('b', 11n);
    expect(sent).to.deep.equal([]);
    await turn();
    expect(sent).to.have.length(1);
    expect(sent[0]!.started).to.deep.equal({ attempts: ['a', 'b'], startedNs: [10n, 11n] });
    expect(sent[0]!.responses.map((r) => r.attempt)).to.deep.equal(['a']);
    await turn();
    expect(sent, 'nothing held: nothing sent').to.have.length(1);
  });

  it('cuts a turn at MAX_BATCH entries, and every start leaves no later than its response', async () => {
    const sent: Progress[] = [];
    const o = new ProgressOutbox((m) => sent.push(m));
    const n = 2 * MAX_BATCH + 7;
    for (let i = 0; i < n; i++) {
      o.started(`x${i}`, BigInt(i));
      o.response(response(`x${i}`));
    }
    await turn();
    for (const m of sent) expect(m.started.attempts.length + m.responses.length).to.be.at.most(MAX_BATCH);
    const startedIn = new Map<string, number>();
    sent.forEach((m, k) => m.started.attempts.forEach((a) => startedIn.set(a, k)));
    sent.forEach((m, k) => m.responses.forEach((r) => expect(startedIn.get(r.attempt)).to.be.at.most(k)));
    expect(startedIn.size).to.equal(n);
    expect(sent.reduce((sum, m) => sum + m.responses.length, 0)).to.equal(n);
  });

  it('flush() sends what is held at once', () => {
    const sent: Progress[] = [];
    const o = new ProgressOutbox((m) => sent.push(m));
    o.flush();
    expect(sent).to.deep.equal([]);
    o.response(response('z'));
    o.flush();
    expect(sent).to.have.length(1);
  });
});
