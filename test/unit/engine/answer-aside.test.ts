import { expect } from 'chai';
import type { Command, Reply } from '../../../lib/domain/command.ts';
import { answerAside } from '../../../lib/engine/answer-aside.ts';

const METRICS: Reply = { ok: true, kind: 'metrics', text: '# metrics\n' };
const isMetrics = (c: Command): boolean => c.op === 'metrics';

describe('engine/answer-aside', () => {
  it('passes a batch without such commands on untouched', () => {
    const cmds: Command[] = [{ op: 'stat' }];
    let passed: readonly Command[] | null = null;
    let answered: Reply[] | null = null;
    answerAside(cmds, isMetrics, () => Promise.reject(new Error('unused')), (c, done) => { passed = c; done([{ ok: true, kind: 'done' }]); }, (r) => { answered = r; });
    expect(passed).to.equal(cmds);
    expect(answered).to.deep.equal([{ ok: true, kind: 'done' }]);
  });

  it('answers them itself and the rest through the batch, in the batch\'s order', async () => {
    const cmds: Command[] = [{ op: 'metrics' }, { op: 'job.get', id: 'a' }, { op: 'metrics' }, { op: 'stat' }];
    let passed: readonly Command[] = [];
    const replies = await new Promise<Reply[]>((resolve) => {
      answerAside(cmds, isMetrics, async () => METRICS, (c, done) => {
        passed = c;
        setImmediate(() => done([{ ok: false, code: 'not_found', message: 'x' }, { ok: true, kind: 'done' }]));
      }, resolve);
    });
    expect(passed).to.deep.equal([{ op: 'job.get', id: 'a' }, { op: 'stat' }]);
    expect(replies).to.deep.equal([METRICS, { ok: false, code: 'not_found', message: 'x' }, METRICS, { ok: true, kind: 'done' }]);
  });

  it('answers internal for one that fails, and needs no batch when all are its own', async () => {
    let called = false;
    const replies = await new Promise<Reply[]>((resolve) => {
      answerAside([{ op: 'metrics' }], isMetrics, () => Promise.reject(new Error('boom')), () => { called = true; }, resolve);
    });
    expect(called).to.equal(false);
    expect(replies).to.deep.equal([{ ok: false, code: 'internal', message: '' }]);
  });
});
