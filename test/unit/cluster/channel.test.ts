// The IPC channel's batching and sequence matching (cluster/ipc/channel.ts), without processes:
// what is pushed in one event-loop turn leaves as one message, cut at MAX_BATCH entries; the
// worker side matches each reply to its request by seq, whatever order replies come in.
import { expect } from 'chai';
import { MAX_BATCH, PrimaryLink, TurnBatcher } from '../../../cluster/ipc/channel.ts';
import type { Command, Reply } from '../../../lib/domain/command.ts';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const DONE: Reply = { ok: true, kind: 'done' };

describe('cluster/ipc/channel', () => {
  describe('TurnBatcher', () => {
    it('sends everything pushed during one turn as one message, after the turn', async () => {
      const sent: Array<[number[], string[]]> = [];
      const b = new TurnBatcher<number, string>((as, bs) => sent.push([as, bs]));
      b.push(1, 'a');
      b.push(2, 'b');
      expect(sent).to.deep.equal([]);
      await turn();
      expect(sent).to.deep.equal([[[1, 2], ['a', 'b']]]);
      b.push(3, 'c');
      await turn();
      expect(sent).to.have.length(2);
      await turn();
      expect(sent).to.have.length(2); // nothing pushed: nothing sent
    });

    it('cuts a turn at MAX_BATCH entries: no message grows with the load', async () => {
      const sizes: number[] = [];
      const b = new TurnBatcher<number, null>((as) => sizes.push(as.length));
      for (let i = 0; i < 2 * MAX_BATCH + 5; i++) b.push(i, null);
      expect(sizes).to.deep.equal([MAX_BATCH, MAX_BATCH]);
      await turn();
      expect(sizes).to.deep.equal([MAX_BATCH, MAX_BATCH, 5]);
    });
  });

  describe('PrimaryLink', () => {
    it('numbers requests, batches them per turn, and hands each reply to its own request', async () => {
      const batches: Array<{ seqs: number[]; cmds: Command[] }> = [];
      const link = new PrimaryLink((seqs, cmds) => batches.push({ seqs, cmds }));
      const got: string[] = [];
      link.request({ op: 'stat' }, (r) => got.push(`a:${r.ok}`));
      const b = link.requestAsync({ op: 'job.get', id: 'x' });
      await turn();
      expect(batches).to.have.length(1);
      const [s1, s2] = batches[0]!.seqs;
      expect(s1).to.not.equal(s2);
      // replies in the other order, with an unknown seq among them (a reply for a request of a
      // worker incarnation that is gone): each reaches its own request, the stranger nothing
      link.deliver([s2!, 999_999, s1!], [{ ok: false, code: 'not_found', message: 'm' }, DONE, DONE]);
      expect(got).to.deep.equal(['a:true']);
      expect(await b).to.deep.equal({ ok: false, code: 'not_found', message: 'm' });
      // a second delivery of the same seq is ignored: a callback runs once
      link.deliver([s1!], [DONE]);
      expect(got).to.deep.equal(['a:true']);
    });
  });
});
