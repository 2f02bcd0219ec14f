// The ordered stop (cluster/shutdown.ts) over stand-in parts: workers drained first (the
// engine still answers them), then the tick, the runners, the log, telemetry and the pidfile,
// each step after the previous one has finished; a stop during start-up finds only some parts.
import { expect } from 'chai';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopParts, type StopParts } from '../../../cluster/shutdown.ts';
import { tempDir } from '../../helpers/tmp.ts';

describe('cluster/shutdown', () => {
  it('drains workers, then stops the tick, the runners, the log and telemetry, then removes the pidfile', async () => {
    const order: string[] = [];
    const later = (name: string) => () => new Promise<void>((resolve) => setImmediate(() => { order.push(name); resolve(); }));
    const pidfile = join(tempDir(), 'tickd.pid');
    writeFileSync(pidfile, '1\n');
    const parts = {
      supervisor: { drain: later('workers drained') },
      ticker: { stop: () => { order.push('tick stopped'); } },
      pool: { stop: later('runners stopped') },
      storage: { close: later('log closed') },
      telemetry: { shutdown: later('telemetry flushed') },
      pidfile,
    } as unknown as StopParts;
    await stopParts(parts);
    expect(order).to.deep.equal(['workers drained', 'tick stopped', 'runners stopped', 'log closed', 'telemetry flushed']);
    expect(existsSync(pidfile)).to.equal(false);
  });

  it('a stop during start-up acts on the parts that exist, and leaves a pidfile it did not write', async () => {
    const order: string[] = [];
    const pidfile = join(tempDir(), 'tickd.pid');
    writeFileSync(pidfile, 'another instance\n');
    await stopParts({ storage: { close: async () => { order.push('log closed'); } } } as unknown as StopParts);
    expect(order).to.deep.equal(['log closed']);
    expect(existsSync(pidfile)).to.equal(true);
  });
});
