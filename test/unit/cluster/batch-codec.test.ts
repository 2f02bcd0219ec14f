// The wire form of a worker's command batch (cluster/ipc/batch-codec.ts): SETs packed as bytes,
// everything else beside them as objects, the order and the seqs kept; through a real
// structured-clone round trip (v8.serialize, as the IPC channel's 'advanced' serialization).
import { expect } from 'chai';
import { deserialize, serialize } from 'node:v8';
import type { Command } from '../../../lib/domain/command.ts';
import { BatchDecodeError, decodeBatch, encodeBatch, type WireBatch } from '../../../cluster/ipc/batch-codec.ts';

const overIpc = (w: WireBatch): WireBatch => deserialize(serialize({ t: 'batch', ...w })) as WireBatch;

describe('cluster/ipc batch codec', () => {
  it('round-trips a mixed batch in order, SETs packed and the rest as objects', () => {
    const cmds: Command[] = [
      { op: 'job.set', id: 'a.1', execution: 1893466800000000000n },
      { op: 'job.get', id: 'a.1' },
      { op: 'job.set', id: 'x'.repeat(1024), execution: -(2n ** 63n) },
      { op: 'job.list', prefix: 'a.', scope: '', cursor: 0, limit: 10, statuses: ['failed'] },
      { op: 'job.set', id: 'b:_-.', execution: 2n ** 63n - 1n },
      { op: 'stat' } as Command,
    ];
    const seqs = [7, 8, 0x7fffffff, 1, 2, 3];
    const wire = encodeBatch(seqs, cmds);
    expect(wire.rest.map((c) => c.op)).to.deep.equal(['job.get', 'job.list', 'stat']);
    const back = decodeBatch(overIpc(wire));
    expect(back.seqs).to.deep.equal(seqs);
    expect(back.cmds).to.deep.equal(cmds);
  });

  it('leaves as objects the SETs it cannot pack: outside i64, a non-ASCII identifier, one too long', () => {
    const cmds: Command[] = [
      { op: 'job.set', id: 'big', execution: 2n ** 63n },
      { op: 'job.set', id: 'small', execution: -(2n ** 63n) - 1n },
      { op: 'job.set', id: 'é.ü', execution: 5n },
      { op: 'job.set', id: 'ok', execution: 5n },
      { op: 'job.set', id: 'y'.repeat(70_000), execution: 5n },
    ];
    const wire = encodeBatch([1, 2, 3, 4, 5], cmds);
    expect(wire.rest).to.have.length(4);
    expect(decodeBatch(overIpc(wire)).cmds).to.deep.equal(cmds);
  });

  it('an empty batch is empty both ways', () => {
    const wire = encodeBatch([], []);
    expect(wire.bin.length).to.equal(0);
    expect(decodeBatch(overIpc(wire))).to.deep.equal({ seqs: [], cmds: [] });
  });

  it('refuses a batch cut short, an unknown tag, or objects that do not match its entries', () => {
    const wire = encodeBatch([1, 2], [{ op: 'job.set', id: 'a', execution: 1n }, { op: 'job.get', id: 'a' }]);
    for (let cut = 1; cut < wire.bin.length; cut++) {
      if (cut === 16) continue; // a whole first entry: the rest is then an unnamed object
      expect(() => decodeBatch({ bin: wire.bin.subarray(0, cut), rest: wire.rest }), `cut at ${cut}`).to.throw(BatchDecodeError);
    }
    expect(() => decodeBatch({ bin: wire.bin.subarray(0, 16), rest: wire.rest })).to.throw(BatchDecodeError, 'does not name');
    expect(() => decodeBatch({ bin: wire.bin, rest: [] })).to.throw(BatchDecodeError, 'more objects');
    const bad = Buffer.from(wire.bin);
    bad[4] = 9;
    expect(() => decodeBatch({ bin: bad, rest: wire.rest })).to.throw(BatchDecodeError, 'unknown batch entry tag 9');
  });
});
